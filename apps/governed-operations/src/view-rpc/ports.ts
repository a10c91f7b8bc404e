import type {
  BoundGeneration,
  BoundToolHandle,
  ErrorEnvelope,
  HostProfile,
  JsonRpcId,
  SessionKey,
  ViewPolicy,
  ViewRpcNotificationMethod,
  ViewRpcRequestMethod,
} from '@apphost/contracts';
import type { StoredView } from '../views/view-records';

/*
 * The pieces of the View RPC pipeline and how they meet. `view-rpc.service.ts` runs, for each message:
 *
 *   authenticate (View visible to the caller, grant) → parseViewMessage (structure, published schemas, size)
 *   → notification: ViewNotifications.handle → `accepted`
 *   → request: RpcLimiter.admit (rate, queue depth) → InFlightOperations.begin (live id scope; cancellation handle)
 *     → ViewBarrier.check (immediately before any effect) → ViewIdempotency.begin (after the barrier: a retained
 *     outcome is delivered only to a caller that passes it now) → execute on the bound generation → validate the
 *     response → AppAudit.record → InFlightOperations.settle (first terminal outcome wins) → `response` or `cancelled`.
 *
 * Every failure is an AppHostError with `details.reason`; the service turns it into a JSON-RPC error (`jsonRpcCodeOf`).
 */

/** One JSON-RPC message after admission: a request (with its id) or a notification. */
export type ParsedViewMessage =
  | {
      kind: 'request';
      id: JsonRpcId;
      method: ViewRpcRequestMethod;
      params: Record<string, unknown>;
      /** `params._meta["io.apphost/idempotency-key"]` of a `tools/call` / `resources/read`, validated; else null. */
      idempotencyKey: string | null;
    }
  | { kind: 'notification'; method: ViewRpcNotificationMethod; params: Record<string, unknown> };

/** The View an operation runs for, after authentication: its record, profile and policy. */
export interface ViewContext {
  view: StoredView;
  profile: HostProfile;
  policy: ViewPolicy;
}

/** A held admission slot (queue depth); released exactly once whatever the outcome. */
export interface RpcSlot {
  release(): Promise<void>;
}

/** What a governed operation targets, as the barrier re-checks it. */
export type OperationTarget =
  { kind: 'tool'; name: string; arguments: Record<string, unknown> } | { kind: 'read'; uri: string } | { kind: 'list' } | { kind: 'ping' };

/** What passed the barrier: where the operation runs, and for a tool the handle it was checked against. */
export interface BarrierPass {
  generation: BoundGeneration;
  /** `tools/call` only: the current app-catalog entry of the tool on the View's own generation. */
  tool: BoundToolHandle | null;
  /** `resources/read` only: the canonical URI (the idempotency identity and the audit record use it). */
  canonicalUri: string | null;
  session: SessionKey;
  incarnation: number;
}

/** The terminal outcome of an operation, as idempotency retains it and the service answers it. */
export type RetainedOutcome = { kind: 'result'; result: Record<string, unknown> } | { kind: 'error'; error: ErrorEnvelope };

/** Where an idempotency key's namespace is: the key is unique only within it. */
export interface IdempotencyScope {
  principalDigest: string;
  viewId: string;
  toolsetId: string;
  bindingRevision: string;
  session: SessionKey;
  incarnation: number;
  generationId: string;
  /** Reads only: the profile's resource-policy revision (and limits revision), so a policy change never replays a read. */
  policyRevision: string | null;
}

export type IdempotencyTicket =
  /** First use of the key (or its record expired): run, then `complete` (or `abandon` when nothing ran). */
  | { kind: 'execute'; complete(outcome: RetainedOutcome): Promise<void>; abandon(): Promise<void> }
  /** The key's one outcome (possibly after waiting for an in-flight first use): deliver it, run nothing. */
  | { kind: 'retained'; outcome: RetainedOutcome };

/** A live request of one View generation: the id is held until `settle`; `cancelled` says whether a cancel won. */
export interface InFlightOperation {
  /** The id the upstream call runs under (`ConnCallTool.callId`), so a cancel on any replica reaches it. */
  readonly callId: string;
  /**
   * Records the terminal outcome: true when this outcome is the first (deliver it), false when a
   * `notifications/cancelled` won (answer `cancelled`, never a late response). Releases the live id.
   */
  settle(): Promise<boolean>;
}
