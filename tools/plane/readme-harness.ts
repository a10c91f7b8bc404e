import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '@apphost/testing';

/** One HTTP reply of the gateway: its status and parsed JSON body. */
export interface Reply<T = Record<string, unknown>> {
  status: number;
  body: T;
}

export interface ToolCall {
  functionCallId: string;
  tool: string;
  arguments: Record<string, unknown>;
}

/**
 * The README walkthrough's HTTP calls (profile, toolsets, session, catalog, batch) as a small client, so e2e and fault
 * tests drive the plane the way a runtime does. Every call has a deadline (`deadlineMs`).
 */
export class ReadmeFlow {
  constructor(
    readonly base: string,
    private readonly tokenFile: string,
    /** The deadline the plane is given (`x-apphost-timeout-ms`); the client gives up a little after it. */
    private readonly deadlineMs = 10_000,
  ) {}

  async request<T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<Reply<T>> {
    const token = fs.readFileSync(this.tokenFile, 'utf8').trim();
    const res = await fetch(`${this.base}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-apphost-timeout-ms': String(this.deadlineMs) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.deadlineMs + 5_000),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
  }

  /** The demo profile and the given toolsets (id → toolset body); each must end PROFILE_BOUND. */
  async setUp(toolsets: Record<string, unknown>): Promise<void> {
    const profile = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', 'demo-profile.json'), 'utf8')) as unknown;
    expectOk(await this.request('PUT', '/v1/profiles/demo', profile), 'profile');
    for (const [id, toolset] of Object.entries(toolsets)) expectOk(await this.request('PUT', `/v1/toolsets/${id}`, toolset), `toolset ${id}`);
  }

  /** `creationOperationId` is the create's idempotency key: a retry with the same one completes that creation. */
  openSession(sessionId: string, creationOperationId?: string): Promise<Reply> {
    return this.request('POST', '/v1/sessions', { appName: 'demo', sessionId, ...(creationOperationId ? { creationOperationId } : {}) });
  }

  deleteSession(sessionId: string): Promise<Reply> {
    return this.request('DELETE', `/v1/sessions/${sessionId}?appName=demo`);
  }

  catalog(sessionId: string): Promise<Reply<{ tools: { name: string }[] }>> {
    return this.request('GET', `/v1/sessions/${sessionId}/catalog?appName=demo`);
  }

  batch(sessionId: string, invocationId: string, calls: ToolCall[]): Promise<Reply> {
    return this.request('POST', `/v1/sessions/${sessionId}/tool-batches`, { appName: 'demo', invocationId, calls });
  }

  events(sessionId: string): Promise<Reply<{ events: { id: number; widgets?: unknown[] }[] }>> {
    return this.request('GET', `/v1/sessions/${sessionId}/events?appName=demo`);
  }
}

function expectOk(reply: Reply, what: string): void {
  if (reply.status >= 300) throw new Error(`${what}: HTTP ${reply.status} ${JSON.stringify(reply.body)}`);
}

/** The README's toolset of the published basic-vanillajs server, over stdio. */
export function vanillaToolset(): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', 'vanilla-toolset.json'), 'utf8')) as Record<string, unknown>;
}
