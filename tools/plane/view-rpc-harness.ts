import os from 'node:os';
import path from 'node:path';
import {
  APP_AUDIT_METADATA_KEY,
  IDEMPOTENCY_META_KEY,
  type AppAuditRecord,
  type HostProfile,
  type PublicEvent,
  type ToolsetSpecInput,
} from '@apphost/contracts';
import { dropSchemasWithPrefix, readCallLog, startFakeProviders, startPrivateNats, uniquePrefix, type LoggedCall, type PrivateNats } from '@apphost/testing';
import { token } from './catalog-harness';
import { bootViewPlane, putProfile, putToolset, sessionWithUiCall, uiCall, viewHttp, type HttpReply, type ViewPlane } from './views-harness';

/*
 * The View RPC suites' shared steps: a plane with its profiles and toolsets, a live View of one UI call, one
 * JSON-RPC message from that View (`POST /v1/views/{viewId}/rpc`, bearer + grant + Origin), the app audit events
 * it left, and what the fixture executed (its `--calls-file`), which is how every "nothing ran" is proven.
 */

/** A live View as the suites use it: who opened it, of which call, and its grant. */
export interface LiveView {
  viewId: string;
  grant: string;
  bearer: string;
  appName: string;
  sessionId: string;
  userId: string | null;
  eventId: number;
  incarnation: number;
  /** The full result of the call the View renders (its `toolResult`). */
  toolResult: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- read field by field
}

export interface RpcPlane {
  prefix: string;
  nats: PrivateNats;
  plane: ViewPlane;
  http: ReturnType<typeof viewHttp>;
  rpc: ReturnType<typeof viewRpc>;
  /** A bearer with `runtime view` (and `admin` for `admin: true`) for `sub`. */
  bearer(sub: string, options?: { admin?: boolean }): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Boots the View plane (private NATS, fake export-audit provider), puts the profiles, then the toolsets, and checks
 * that each bound as expected (`PROFILE_BOUND` unless `expect` says otherwise).
 */
export async function startRpcPlane(setup: {
  apps: Record<string, string[]>;
  profiles: Record<string, HostProfile>;
  toolsets: Record<string, ToolsetSpecInput>;
  env?: Parameters<typeof bootViewPlane>[3];
  registryProcess?: boolean;
}): Promise<RpcPlane> {
  const prefix = uniquePrefix();
  const nats = await startPrivateNats();
  const providers = await startFakeProviders(nats.url, ['export-audit']);
  const plane = await bootViewPlane(nats.url, prefix, setup.apps, setup.env, { registryProcess: setup.registryProcess });
  const stop = async () => {
    await plane.stop();
    await providers.stop();
    await nats.stop();
    await dropSchemasWithPrefix(prefix);
  };
  try {
    for (const [profileId, body] of Object.entries(setup.profiles)) await putProfile(plane, profileId, body);
    const states = await Promise.all(Object.entries(setup.toolsets).map(async ([id, spec]) => [id, await putToolset(plane, id, spec)] as const));
    const notBound = states.filter(([, state]) => state !== 'PROFILE_BOUND');
    if (notBound.length > 0) throw new Error(`toolsets not PROFILE_BOUND: ${JSON.stringify(notBound)}`);
  } catch (error) {
    await stop();
    throw error;
  }
  const bearer = (sub: string, options: { admin?: boolean } = {}) => token(sub, options.admin ? 'runtime admin view' : 'runtime view');
  const http = viewHttp(plane);
  return { prefix, nats, plane, http, rpc: viewRpc(http), bearer, stop };
}

/**
 * Runs one UI call (in a new session unless `existingSession`) and opens its live View.
 * Throws unless the View is live.
 */
export async function openView(
  http: ReturnType<typeof viewHttp>,
  bearer: string,
  target: {
    appName: string;
    sessionId: string;
    tool: string;
    arguments?: Record<string, unknown>;
    userId?: string;
    invocationId?: string;
    functionCallId?: string;
    existingSession?: boolean;
  },
): Promise<LiveView> {
  const ev = target.existingSession ? await uiCall(http, bearer, target) : await sessionWithUiCall(http, bearer, target);
  const opened = await http('POST', '/v1/views', {
    bearer,
    body: {
      appName: target.appName,
      sessionId: target.sessionId,
      eventId: ev.eventId,
      functionCallId: target.functionCallId ?? 'call-1',
      ...(target.userId ? { userId: target.userId } : {}),
    },
  });
  if (opened.status !== 201 || opened.body.mode !== 'live') throw new Error(`open view: ${opened.status} ${opened.text.slice(0, 500)}`);
  return {
    viewId: opened.body.viewId as string,
    grant: opened.body.grant as string,
    bearer,
    appName: target.appName,
    sessionId: target.sessionId,
    userId: target.userId ?? null,
    eventId: ev.eventId,
    incarnation: ev.incarnation,
    toolResult: opened.body.toolResult as LiveView['toolResult'],
  };
}

export interface RpcOptions {
  /** The JSON-RPC id (default: a fresh one). */
  id?: string | number;
  /** `params._meta["io.apphost/idempotency-key"]`. */
  key?: string;
  /** Overrides of what the browser sends (a wrong grant, another bearer, another Origin). */
  grant?: string;
  bearer?: string;
  origin?: string | null;
  /** `X-AppHost-User-Attested` (the host page relays `message` after asking the user). */
  attested?: string;
  /** The request's deadline (`x-apphost-timeout-ms`). */
  timeoutMs?: number;
}

/** What a View RPC needs of a live View: its id, its grant and the bearer that opened it. */
export type RpcView = Pick<LiveView, 'viewId' | 'grant' | 'bearer'>;

/** A text content block. */
export const text = (value: string) => ({ type: 'text' as const, text: value });

/** JSON-RPC over `POST /v1/views/{viewId}/rpc`, as the host page relays a View's messages. */
export function viewRpc(http: ReturnType<typeof viewHttp>) {
  let next = 0;
  const send = (view: RpcView, message: unknown, options: RpcOptions = {}): Promise<HttpReply> =>
    http('POST', `/v1/views/${view.viewId}/rpc`, {
      bearer: options.bearer ?? view.bearer,
      origin: options.origin,
      headers: {
        'x-apphost-view-grant': options.grant ?? view.grant,
        ...(options.attested ? { 'x-apphost-user-attested': options.attested } : {}),
        ...(options.timeoutMs ? { 'x-apphost-timeout-ms': String(options.timeoutMs) } : {}),
      },
      body: message,
    });
  const request = (view: RpcView, method: string, params: Record<string, unknown>, options: RpcOptions = {}) => {
    const meta = options.key === undefined ? {} : { _meta: { [IDEMPOTENCY_META_KEY]: options.key } };
    return send(view, { jsonrpc: '2.0', id: options.id ?? `rpc-${++next}`, method, params: { ...params, ...meta } }, options);
  };
  return {
    send,
    request,
    call: (view: RpcView, name: string, args: Record<string, unknown> = {}, options: RpcOptions = {}) =>
      request(view, 'tools/call', { name, arguments: args }, options),
    read: (view: RpcView, uri: string, options: RpcOptions = {}) => request(view, 'resources/read', { uri }, options),
    notify: (view: RpcView, method: string, params: Record<string, unknown> = {}, options: RpcOptions = {}) =>
      send(view, { jsonrpc: '2.0', method, params }, options),
    cancel: (view: RpcView, requestId: string | number) =>
      send(view, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'user' } }),
    /** `ui/update-model-context` (an empty `params` clears the View's register). */
    updateContext: (view: RpcView, params: { content?: unknown[]; structuredContent?: Record<string, unknown> }, options: RpcOptions = {}) =>
      request(view, 'ui/update-model-context', params, options),
    /** `ui/message` with one text block (role `user`). */
    sendMessage: (view: RpcView, message: string, options: RpcOptions = {}) => request(view, 'ui/message', { role: 'user', content: [text(message)] }, options),
  };
}
export type ViewRpc = ReturnType<typeof viewRpc>;

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON-RPC replies are read field by field */
/** The `result` of a successful JSON-RPC reply (fails the test with the reply otherwise). */
export function resultOf(reply: HttpReply): Record<string, any> {
  if (reply.status !== 200 || !reply.body.result) throw new Error(`expected a JSON-RPC result, got ${reply.status} ${reply.text.slice(0, 500)}`);
  return reply.body.result as Record<string, any>;
}

/** The `error` of a JSON-RPC error reply (fails the test with the reply otherwise). */
export function rpcErrorOf(reply: HttpReply): {
  code: number;
  message: string;
  data: { code: string; reason: string | null; retryable: boolean } & Record<string, any>;
} {
  if (reply.status !== 200 || !reply.body.error) throw new Error(`expected a JSON-RPC error, got ${reply.status} ${reply.text.slice(0, 500)}`);
  return reply.body.error;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** `structuredContent` of a successful `tools/call`. */
export const structuredOf = (reply: HttpReply) => resultOf(reply).structuredContent as Record<string, unknown>;

/** A fixture's call log of one suite (`--calls-file=`), in the OS temp dir, unique to the plane. */
export function callsFile(prefix: string, name: string): string {
  return path.join(os.tmpdir(), `apphost-${prefix}-${name}.calls.jsonl`);
}

/** How many times the fixture executed `name` (a tool, or a URI for `resources/read`). */
export function executed(file: string, name: string, method: LoggedCall['method'] = 'tools/call'): number {
  return readCallLog(file).filter((c) => c.method === method && c.name === name).length;
}

/** Every event of the session's current incarnation (`?audience=all`: app audit events included), all pages. */
export async function sessionEvents(
  http: ReturnType<typeof viewHttp>,
  view: Pick<LiveView, 'bearer' | 'appName' | 'sessionId' | 'userId'>,
  audience: 'all' | 'model' = 'all',
): Promise<{ status: number; events: PublicEvent[]; text: string }> {
  const events: PublicEvent[] = [];
  let text = '';
  let afterId = 0;
  for (;;) {
    const query = new URLSearchParams({ appName: view.appName, afterId: String(afterId), limit: '500', ...(view.userId ? { userId: view.userId } : {}) });
    if (audience === 'all') query.set('audience', 'all');
    const page = await http('GET', `/v1/sessions/${view.sessionId}/events?${query}`, { bearer: view.bearer });
    if (page.status !== 200) return { status: page.status, events, text: page.text };
    text += page.text;
    events.push(...(page.body.events as PublicEvent[]));
    if (page.body.nextAfterId === null || page.body.nextAfterId === undefined) return { status: 200, events, text };
    afterId = page.body.nextAfterId as number;
  }
}

/** The app audit events of one View, with their records, in ledger order. */
export async function auditOf(http: ReturnType<typeof viewHttp>, view: LiveView): Promise<Array<{ event: PublicEvent; record: AppAuditRecord }>> {
  const { events } = await sessionEvents(http, view, 'all');
  return events
    .filter((e) => e.audience === 'app_audit')
    .map((event) => ({ event, record: event.customMetadata?.[APP_AUDIT_METADATA_KEY] as unknown as AppAuditRecord }))
    .filter(({ record }) => record?.viewId === view.viewId);
}

/** The operation records of one View (summaries left out). */
export async function auditOperations(http: ReturnType<typeof viewHttp>, view: LiveView) {
  return (await auditOf(http, view)).flatMap(({ event, record }) => (record.kind === 'operation' ? [{ event, record }] : []));
}

/** The reasons the post-queue barrier (or authentication) refuses with: nothing reached the server. */
export const BARRIER_REASONS: readonly string[] = [
  'VIEW_REVOKED',
  'VIEW_GRANT_INVALID',
  'PRINCIPAL_REVOKED',
  'TOOL_NOT_APP_VISIBLE',
  'RESOURCE_POLICY_DENIED',
  'SESSION_NOT_ACTIVE',
  'STALE_INCARNATION',
  'BINDING_CHANGED',
  'CONNECTION_GENERATION_GONE',
];

/** Whether a reply is a refusal before any effect: an HTTP error envelope (401/403/404) or a barrier denial. */
export function isDenial(reply: HttpReply): boolean {
  if (reply.status === 401 || reply.status === 403 || reply.status === 404) return true;
  const data = reply.status === 200 ? reply.body.error?.data : undefined;
  const reason = data?.reason as string | undefined;
  // A result withheld because the View ended while the operation ran is not a refusal: it ran.
  // Nor is an operation whose connection died under it (OUTCOME_UNKNOWN): it may have run.
  return reason !== undefined && BARRIER_REASONS.includes(reason) && data?.['executed'] !== true && data?.code !== 'OUTCOME_UNKNOWN';
}
