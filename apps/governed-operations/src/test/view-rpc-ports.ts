import {
  AppHostError,
  GovernedReasons,
  IDEMPOTENCY_META_KEY,
  idempotencyKeySchema,
  VIEW_RPC_NOTIFICATIONS,
  VIEW_RPC_REQUESTS,
  type JsonRpcId,
  type ViewRpcNotificationMethod,
  type ViewRpcRequestMethod,
} from '@apphost/contracts';
import type { AuditEntry, IdempotencyScope, ParsedViewMessage, RetainedOutcome, ViewRpcPorts } from '../view-rpc/ports';

/**
 * Small in-memory implementations of the View RPC ports, recording what they were asked, so a spec of the service
 * (the one class under test) sees every step. The real ones are `view-rpc/*.ts` of the other pieces of the pipeline.
 */
export interface RecordingPorts extends ViewRpcPorts {
  seen: {
    audit: AuditEntry[];
    notifications: { method: string; params: Record<string, unknown> }[];
    cancels: JsonRpcId[];
    slots: { admitted: number; released: number };
    scopes: IdempotencyScope[];
  };
  /**
   * Knobs: the limiter refuses every request; the audit fails every record; a cancel is recorded for each request
   * as it begins (one that won while the barrier ran); `complete` of an idempotency ticket fails that many times.
   */
  refuse: { limiter: boolean; audit: boolean; cancelOnBegin: boolean; completeFailures: number };
  /** Runs as a retained outcome is handed out (what happens while a duplicate waits for an in-flight first use). */
  hooks: { retained: (() => void) | null };
  reset(): void;
}

export function recordingPorts(): RecordingPorts {
  const seen: RecordingPorts['seen'] = { audit: [], notifications: [], cancels: [], slots: { admitted: 0, released: 0 }, scopes: [] };
  const refuse = { limiter: false, audit: false, cancelOnBegin: false, completeFailures: 0 };
  const hooks: RecordingPorts['hooks'] = { retained: null };
  const live = new Map<string, { cancelled: boolean }>();
  const keys = new Map<string, { identity: string; outcome: RetainedOutcome | null }>();
  let calls = 0;
  const idKey = (viewId: string, id: JsonRpcId) => `${viewId}\n${typeof id}:${String(id)}`;
  return {
    seen,
    refuse,
    hooks,
    reset: () => {
      hooks.retained = null;
      seen.audit.length = 0;
      seen.notifications.length = 0;
      seen.cancels.length = 0;
      seen.scopes.length = 0;
      seen.slots.admitted = seen.slots.released = 0;
      refuse.limiter = refuse.audit = refuse.cancelOnBegin = false;
      refuse.completeFailures = 0;
      live.clear();
      keys.clear();
    },
    admission: { parse: parseMessage },
    limiter: {
      admit: (_view, pending) => {
        if (refuse.limiter)
          return Promise.reject(new AppHostError('RESOURCE_EXHAUSTED', 'too many calls', { details: GovernedReasons.details('RPC_RATE_LIMITED') }));
        // The live id is claimed with the admission, as the real limiter does it.
        if (pending && live.has(pending.claim.key)) return Promise.reject(pending.inUse());
        if (pending) live.set(pending.claim.key, { cancelled: refuse.cancelOnBegin });
        seen.slots.admitted++;
        let released = false;
        return Promise.resolve({
          release: () => {
            if (!released) seen.slots.released++;
            released = true;
            return Promise.resolve();
          },
        });
      },
    },
    inFlight: {
      prepare: (view, id) => {
        const key = idKey(view.view.record.viewId, id);
        return {
          claim: { key, value: key, ttlMs: 60_000 },
          inUse: () => new AppHostError('INVALID_ARGUMENT', 'id in use', { details: GovernedReasons.details('RPC_ID_IN_USE') }),
          claimed: () => {
            const entry = live.get(key) as { cancelled: boolean };
            return {
              callId: `vc-${++calls}`,
              cancelled: () => Promise.resolve(entry.cancelled),
              settle: () => {
                live.delete(key);
                return Promise.resolve(!entry.cancelled);
              },
            };
          },
        };
      },
      cancel: (view, id) => {
        seen.cancels.push(id);
        const entry = live.get(idKey(view.view.record.viewId, id));
        if (entry) entry.cancelled = true;
        return Promise.resolve(entry !== undefined);
      },
    },
    idempotency: {
      begin: (scope, key, identity) => {
        seen.scopes.push(scope);
        const name = `${JSON.stringify(scope)}\n${key}`;
        const known = keys.get(name);
        if (known && known.identity !== identity)
          return Promise.reject(
            new AppHostError('CONFLICT', 'key used for another operation', { details: GovernedReasons.details('IDEMPOTENCY_KEY_CONFLICT') }),
          );
        if (known?.outcome) {
          hooks.retained?.();
          return Promise.resolve({ kind: 'retained', outcome: known.outcome });
        }
        const entry = { identity, outcome: null as RetainedOutcome | null };
        keys.set(name, entry);
        return Promise.resolve({
          kind: 'execute',
          complete: (outcome: RetainedOutcome) => {
            if (refuse.completeFailures > 0 && refuse.completeFailures--) return Promise.reject(new AppHostError('UNAVAILABLE', 'the store is unavailable'));
            entry.outcome = outcome;
            return Promise.resolve();
          },
          abandon: () => {
            keys.delete(name);
            return Promise.resolve();
          },
        });
      },
    },
    audit: {
      record: (_view, entry) => {
        if (refuse.audit) return Promise.reject(new AppHostError('UNAVAILABLE', 'the ledger is unavailable'));
        seen.audit.push(entry);
        return Promise.resolve();
      },
    },
    notifications: {
      handle: (_view, method, params) => {
        seen.notifications.push({ method, params });
        return Promise.resolve();
      },
    },
  };
}

/** A minimal admission: one JSON-RPC 2.0 object, a served method, the idempotency key of calls and reads. */
function parseMessage(message: unknown): ParsedViewMessage {
  if (typeof message !== 'object' || message === null || Array.isArray(message) || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0')
    throw new AppHostError('INVALID_ARGUMENT', 'not one JSON-RPC 2.0 message', { details: GovernedReasons.details('RPC_INVALID_REQUEST') });
  const { id, method, params = {} } = message as { id?: JsonRpcId; method?: string; params?: Record<string, unknown> };
  if (id === undefined) {
    if (!(VIEW_RPC_NOTIFICATIONS as readonly unknown[]).includes(method))
      throw new AppHostError('NOT_FOUND', `no notification ${String(method)}`, { details: GovernedReasons.details('RPC_METHOD_NOT_FOUND') });
    return { kind: 'notification', method: method as ViewRpcNotificationMethod, params };
  }
  if (!(VIEW_RPC_REQUESTS as readonly unknown[]).includes(method))
    throw new AppHostError('NOT_FOUND', `no method ${String(method)}`, { details: GovernedReasons.details('RPC_METHOD_NOT_FOUND', { id }) });
  const raw = (params['_meta'] as Record<string, unknown> | undefined)?.[IDEMPOTENCY_META_KEY];
  const key = raw === undefined ? null : idempotencyKeySchema.safeParse(raw);
  if (key && !key.success)
    throw new AppHostError('INVALID_ARGUMENT', 'malformed idempotency key', { details: GovernedReasons.details('IDEMPOTENCY_KEY_INVALID', { id }) });
  return { kind: 'request', id, method: method as ViewRpcRequestMethod, params, idempotencyKey: key?.data ?? null };
}
