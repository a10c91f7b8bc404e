import type { HostProfile, PendingMessage, PublicEvent, RunToolBatchResponse, ToolsetSpecInput } from '@apphost/contracts';
import { dropSchemasWithPrefix, eventually, startFakeProviders, startPrivateNats, uniquePrefix, type PrivateNats } from '@apphost/testing';
import { fixtureSpec, token } from './catalog-harness';
import { resultOf, rpcErrorOf, text, viewRpc, type RpcOptions, type ViewRpc } from './view-rpc-harness';
import { bootViewPlane, putProfile, putToolset, sessionWithUiCall, uiCall, viewHttp, viewProfile, type HttpReply, type ViewPlane } from './views-harness';

/*
 * The Conversation suites' shared steps: a View plane whose profile offers `ui/update-model-context` and `ui/message`,
 * a live View of one UI call, the View's JSON-RPC messages (`POST /v1/views/{viewId}/rpc`, as the host page relays
 * them), and a scripted runtime (`GET …/model-context`, `GET …/messages`, `:claim`, `:consume`, tool batches).
 */

/* eslint-disable @typescript-eslint/no-explicit-any -- HTTP and JSON-RPC replies are read field by field */

type Http = ReturnType<typeof viewHttp>;

/** A pending message as the gateway serves it to a runtime (the binding and opener stay inside the store). */
export type PublicMessage = Omit<PendingMessage, 'session' | 'toolsetId' | 'bindingRevision' | 'bindingGeneration' | 'principal'>;

/**
 * A profile for Conversation: `message` (text) and `updateModelContext` (text, structuredContent) declared, `ui/message`
 * accepted without the user's confirmation unless `overrides` say otherwise, and no callbacks granted, so the model's
 * and the View's calls share one connection (the continuation fixture's transcript and jobs are per connection).
 */
export function conversationProfile(overrides: Partial<HostProfile> = {}): HostProfile {
  const base = viewProfile();
  return {
    ...base,
    hostCapabilities: { ...base.hostCapabilities, message: { text: true }, updateModelContext: { text: true, structuredContent: true } },
    callbackPolicy: { sampling: 'deny', elicitation: 'deny', roots: 'deny', message: 'accept' },
    ...overrides,
  };
}

/** The continuation fixture as a toolset of `profileId`. */
export const continuationSpec = (profileId: string): ToolsetSpecInput => fixtureSpec('continuation', profileId);

export interface ConversationPlane {
  prefix: string;
  nats: PrivateNats;
  plane: ViewPlane;
  http: Http;
  /** A bearer with `runtime view` for `sub` (`admin` adds the admin scope). */
  bearer(sub: string, options?: { admin?: boolean }): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Boots the View plane (private NATS, fake export-audit provider), puts the profiles, then the toolsets, and checks
 * that each bound (`PROFILE_BOUND`).
 */
export async function startConversationPlane(setup: {
  apps: Record<string, string[]>;
  profiles: Record<string, HostProfile>;
  toolsets: Record<string, ToolsetSpecInput>;
  env?: Parameters<typeof bootViewPlane>[3];
}): Promise<ConversationPlane> {
  const prefix = uniquePrefix();
  const nats = await startPrivateNats();
  const providers = await startFakeProviders(nats.url, ['export-audit']);
  let plane: ViewPlane | undefined;
  const stop = async () => {
    await plane?.stop();
    await providers.stop();
    await nats.stop();
    await dropSchemasWithPrefix(prefix);
  };
  try {
    plane = await bootViewPlane(nats.url, prefix, setup.apps, setup.env);
    const booted = plane;
    for (const [profileId, body] of Object.entries(setup.profiles)) await putProfile(booted, profileId, body);
    const states = await Promise.all(Object.entries(setup.toolsets).map(async ([id, spec]) => [id, await putToolset(booted, id, spec)] as const));
    const notBound = states.filter(([, state]) => state !== 'PROFILE_BOUND');
    if (notBound.length > 0) throw new Error(`toolsets not PROFILE_BOUND: ${JSON.stringify(notBound)}`);
  } catch (error) {
    await stop();
    throw error;
  }
  const bearer = (sub: string, options: { admin?: boolean } = {}) => token(sub, options.admin ? 'runtime admin view' : 'runtime view');
  return { prefix, nats, plane, http: viewHttp(plane), bearer, stop };
}

/** A live View as the suites use it. `widgetId` is `<eventId>:<functionCallId>`, as the model-context block labels it. */
export interface LiveView {
  viewId: string;
  grant: string;
  bearer: string;
  appName: string;
  sessionId: string;
  eventId: number;
  functionCallId: string;
  widgetId: string;
  incarnation: number;
  /** What the bootstrap offered (`hostCapabilities`). */
  hostCapabilities: Record<string, unknown>;
  toolResult: Record<string, any>;
}

export interface UiCallTarget {
  appName: string;
  sessionId: string;
  tool: string;
  arguments?: Record<string, unknown>;
  invocationId?: string;
  functionCallId?: string;
}

/** Runs one UI call (in a new session unless `existingSession`) and opens a live View of it (throws otherwise). */
export async function openView(http: Http, bearer: string, target: UiCallTarget & { existingSession?: boolean }): Promise<LiveView> {
  const ev = target.existingSession ? await uiCall(http, bearer, target) : await sessionWithUiCall(http, bearer, target);
  return openViewOf(http, bearer, target, ev, target.functionCallId ?? 'call-1');
}

/** Opens one more live View of a widget already on the ledger (two Views of one widget). */
export async function openViewOf(
  http: Http,
  bearer: string,
  target: Pick<UiCallTarget, 'appName' | 'sessionId'>,
  ev: Pick<RunToolBatchResponse, 'eventId' | 'incarnation'>,
  functionCallId = 'call-1',
): Promise<LiveView> {
  const opened = await http('POST', '/v1/views', {
    bearer,
    body: { appName: target.appName, sessionId: target.sessionId, eventId: ev.eventId, functionCallId },
  });
  if (opened.status !== 201 || opened.body.mode !== 'live') throw new Error(`open view: ${opened.status} ${opened.text.slice(0, 500)}`);
  return {
    viewId: opened.body.viewId as string,
    grant: opened.body.grant as string,
    bearer,
    appName: target.appName,
    sessionId: target.sessionId,
    eventId: ev.eventId,
    functionCallId,
    widgetId: `${ev.eventId}:${functionCallId}`,
    incarnation: ev.incarnation,
    hostCapabilities: opened.body.hostCapabilities as Record<string, unknown>,
    toolResult: opened.body.toolResult as Record<string, any>,
  };
}

/** Tears a View down as the host page does (`DELETE /v1/views/{viewId}`: 204). */
export async function teardown(http: Http, view: LiveView): Promise<void> {
  const res = await http('DELETE', `/v1/views/${view.viewId}`, { bearer: view.bearer });
  if (res.status !== 204) throw new Error(`teardown: ${res.status} ${res.text}`);
}

// The View side (JSON-RPC over `POST /v1/views/{viewId}/rpc`) is the View RPC suites' own.
export { resultOf, rpcErrorOf, text, viewRpc, type RpcOptions, type ViewRpc };

/** `structuredContent` of a successful `tools/call` that is not an `isError` result. */
export function structuredOf(reply: HttpReply): Record<string, any> {
  const result = resultOf(reply);
  if (result.isError) throw new Error(`tool error: ${JSON.stringify(result.content)}`);
  return result.structuredContent as Record<string, any>;
}

/** The View polls the fixture's `job-status` until the job leaves `running` (bounded). */
export async function pollJob(rpc: ViewRpc, view: LiveView, jobId: string, timeoutMs = 15_000): Promise<Record<string, any>> {
  return eventually(
    async () => {
      const status = structuredOf(await rpc.call(view, 'job-status', { jobId }));
      return status.state === 'running' ? undefined : status;
    },
    timeoutMs,
    50,
  );
}

/** What `GET …/model-context` answers. */
export interface ModelContext {
  block: { role: 'user'; content: [{ type: 'text'; text: string }] } | null;
  registers: Array<{ widgetId: string; viewId: string; commitSequence: number; bytes: number }>;
  evicted: string[];
}

/** The header the block labels a widget's section with. */
export const sectionHeader = (view: Pick<LiveView, 'widgetId' | 'viewId'>) => `[MCP App context — widget ${view.widgetId}, view ${view.viewId}]`;

/** The runtime side of one session: the routes a runtime's turn loop calls, with a `runtime` bearer. */
export function runtimeOf(http: Http, bearer: string, session: { appName: string; sessionId: string }) {
  const base = `/v1/sessions/${session.sessionId}`;
  const app = `appName=${encodeURIComponent(session.appName)}`;
  return {
    modelContextReply: () => http('GET', `${base}/model-context?${app}`, { bearer }),
    async modelContext(): Promise<ModelContext> {
      const res = await http('GET', `${base}/model-context?${app}`, { bearer });
      if (res.status !== 200) throw new Error(`model-context: ${res.status} ${res.text}`);
      return res.body as ModelContext;
    },
    listReply: (query: { state?: string; waitMs?: number } = {}) =>
      http('GET', `${base}/messages?${app}${query.state ? `&state=${query.state}` : ''}${query.waitMs !== undefined ? `&waitMs=${query.waitMs}` : ''}`, {
        bearer,
      }),
    async messages(query: { state?: string; waitMs?: number } = {}): Promise<PublicMessage[]> {
      const res = await this.listReply(query);
      if (res.status !== 200) throw new Error(`list messages: ${res.status} ${res.text}`);
      return res.body.messages as PublicMessage[];
    },
    claimReply: (messageId: string, claimTtlMs?: number) =>
      http('POST', `${base}/messages/${messageId}:claim`, {
        bearer,
        body: { appName: session.appName, ...(claimTtlMs === undefined ? {} : { claimTtlMs }) },
      }),
    async claim(messageId: string, claimTtlMs?: number): Promise<{ message: PublicMessage; claimToken: string; claimExpiresAt: string }> {
      const res = await this.claimReply(messageId, claimTtlMs);
      if (res.status !== 200) throw new Error(`claim: ${res.status} ${res.text}`);
      return res.body as { message: PublicMessage; claimToken: string; claimExpiresAt: string };
    },
    consumeReply: (messageId: string, claimToken: string, invocationId: string) =>
      http('POST', `${base}/messages/${messageId}:consume`, { bearer, body: { appName: session.appName, claimToken, invocationId } }),
    async consume(messageId: string, claimToken: string, invocationId: string): Promise<PublicMessage> {
      const res = await this.consumeReply(messageId, claimToken, invocationId);
      if (res.status !== 200) throw new Error(`consume: ${res.status} ${res.text}`);
      return res.body.message as PublicMessage;
    },
    /** One model turn's tool batch as `invocationId`. */
    async toolBatch(invocationId: string, calls: Array<{ functionCallId: string; tool: string; arguments?: Record<string, unknown> }>) {
      const res = await http('POST', `${base}/tool-batches`, {
        bearer,
        body: { appName: session.appName, invocationId, calls: calls.map((c) => ({ arguments: {}, ...c })) },
      });
      if (res.status !== 200) throw new Error(`tool batch: ${res.status} ${res.text}`);
      return res.body as RunToolBatchResponse;
    },
    /** Every event of the current incarnation (app audit events included), all pages. */
    async events(): Promise<PublicEvent[]> {
      const events: PublicEvent[] = [];
      let afterId = 0;
      for (;;) {
        const page = await http('GET', `${base}/events?${app}&audience=all&limit=500&afterId=${afterId}`, { bearer });
        if (page.status !== 200) throw new Error(`events: ${page.status} ${page.text}`);
        events.push(...(page.body.events as PublicEvent[]));
        if (page.body.nextAfterId === null || page.body.nextAfterId === undefined) return events;
        afterId = page.body.nextAfterId as number;
      }
    },
    deleteSession: () => http('DELETE', `${base}?${app}`, { bearer }),
  };
}
export type Runtime = ReturnType<typeof runtimeOf>;

/** The response a tool batch's one call got (the result unchanged for the fixture's non-UI tools). */
export function responseOf(batch: RunToolBatchResponse, functionCallId: string): Record<string, any> {
  const found = batch.functionResponses.find((r) => r.functionCallId === functionCallId);
  if (!found) throw new Error(`no function response ${functionCallId} in ${JSON.stringify(batch)}`);
  return found.response as Record<string, any>;
}
