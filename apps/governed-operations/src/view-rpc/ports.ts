import type {
  AppHostError,
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
import type { ContextUpdate } from '../conversation/context-update';
import type { StoredView } from '../views/view-records';

/*
 * The pieces of the View RPC pipeline and how they meet. `view-rpc.service.ts` runs, for each message:
 *
 *   authenticate (View visible to the caller, grant) → parseViewMessage (structure, published schemas, size)
 *   → notification: ViewNotifications.handle → `accepted`
 *   → request: RpcLimiter.admit (rate, queue depth, and the live id InFlightOperations.prepare made: one atomic
 *     store step; the claimed id is the request's cancellation handle)
 *     → ui/message only: ViewMessages.admit (modalities, size, policy, message rate)
 *     → ViewBarrier.check (immediately before any effect; a context update's modalities and size too) → ViewIdempotency.begin (after the barrier: a retained
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

/** What a governed operation targets, as the barrier re-checks it (`context`: a model-context update, its modalities and size). */
export type OperationTarget =
  | { kind: 'tool'; name: string; arguments: Record<string, unknown> }
  | { kind: 'read'; uri: string }
  | { kind: 'list' }
  | { kind: 'ping' }
  | { kind: 'context'; update: ContextUpdate }
  /** `ui/message`: its content blocks as the published schema read them (`conversation/view-messages.ts` holds them to policy). */
  | { kind: 'message'; blocks: Record<string, unknown>[] };

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
  | { kind: 'execute'; complete(outcome: RetainedOutcome, retentionMs?: number): Promise<void>; abandon(): Promise<void> }
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
  /** Whether a `notifications/cancelled` is recorded for it now (read live, right before dispatch: nothing then runs). */
  cancelled(): Promise<boolean>;
}

/**
 * A request's live id, ready to be claimed: the limiter claims it in the same atomic step as it admits the request
 * (rate and queue slot), so admission, queueing and the id are one store round trip.
 */
export interface PendingOperation {
  /** What the claim sets if absent: the id's key, its live record, its TTL. */
  readonly claim: { key: string; value: string; ttlMs: number };
  /** The operation under the claimed id (only once `RpcAdmission.admit` claimed it). */
  claimed(): InFlightOperation;
  /** INVALID_ARGUMENT `RPC_ID_IN_USE`: what the request is told when another request holds the id. */
  inUse(): AppHostError;
}

/*
 * The ports the service is built from (one implementation each; the module wires them). Each throws AppHostError
 * with `details.reason` from GovernedReasons (or the reason of the service it asked) when it refuses.
 */

/** `rpc-admission.ts`: structure, published schemas and size, before anything is queued. */
export interface MessageAdmission {
  /**
   * Throws INVALID_ARGUMENT (`RPC_INVALID_REQUEST`, `RPC_INVALID_PARAMS`, `IDEMPOTENCY_KEY_INVALID`, `ARGUMENTS_NOT_CANONICAL`), NOT_FOUND (`RPC_METHOD_NOT_FOUND`), PAYLOAD_TOO_LARGE (`RPC_REQUEST_TOO_LARGE`); `details.id` is the request id when it could be read.
   * An error about a well-formed notification (an unknown method, malformed params, too large) has `details.notification: true`
   * instead: a notification is never answered, so the caller logs it and answers `accepted`.
   */
  parse(message: unknown, bytes: number, policy: ViewPolicy): ParsedViewMessage;
}

/** `rpc-limiter.ts`: per-View and per-session rate and queue depth, in the coordination store (shared by replicas). */
export interface RpcAdmission {
  /**
   * Throws RESOURCE_EXHAUSTED `RPC_RATE_LIMITED` / `RPC_QUEUE_FULL` (retryable). With `pending`, its id is claimed in
   * the same step: held by another request, it throws `pending.inUse()` (the request counted by rate, no slot held).
   */
  admit(view: ViewContext, pending?: PendingOperation): Promise<RpcSlot>;
}

/** `in-flight-operations.ts`: the live JSON-RPC id scope of a View generation, and cancellation across replicas. */
export interface OperationRegistry {
  /** The id on the View's generation, to be claimed by `RpcAdmission.admit` (INVALID_ARGUMENT `RPC_ID_IN_USE` while another request holds it). */
  prepare(view: ViewContext, id: JsonRpcId, method: ViewRpcRequestMethod): PendingOperation;
  /**
   * `notifications/cancelled` for `id`: when it is live, records the cancel (first terminal outcome wins) and asks the
   * generation's owner to cancel the upstream call; false when nothing live had that id (ignored).
   */
  cancel(view: ViewContext, id: JsonRpcId): Promise<boolean>;
}

/** `view-idempotency.ts`: retained outcomes of `tools/call` / `resources/read` by idempotency key. */
export interface IdempotencyPort {
  /**
   * Same key + same identity → `retained` (waiting, until `deadlineAt`, for an in-flight first use, which is never run
   * twice); same key + other identity → CONFLICT `IDEMPOTENCY_KEY_CONFLICT`; else `execute`.
   */
  begin(scope: IdempotencyScope, key: string, identity: string, retentionMs: number, deadlineAt: number): Promise<IdempotencyTicket>;
}

/** One app audit entry, as the service hands it over (the audit port appends the event, sealing where asked). */
export interface AuditEntry {
  method: string;
  tool: string | null;
  uri: string | null;
  decision: 'executed' | 'denied';
  outcome: 'ok' | 'cancelled' | ErrorEnvelope['code'];
  reason: string | null;
  replayed: boolean;
  durationMs: number;
  /** A UI-associated tool's full result: sealed, and listed in the event's `sealedResultRefs` under a host-minted id. */
  seal: { tool: BoundToolHandle; arguments: Record<string, unknown>; result: Record<string, unknown> } | null;
}

/** `app-audit.ts`: app audit events in the ledger, with the profile's per-View retention. */
export interface AuditPort {
  record(view: ViewContext, entry: AuditEntry): Promise<void>;
}

/** `view-notifications.ts`: the notifications a View may send (everything but `notifications/cancelled`). */
export interface NotificationPort {
  handle(view: ViewContext, method: Exclude<ViewRpcNotificationMethod, 'notifications/cancelled'>, params: Record<string, unknown>): Promise<void>;
}

/** Every port, as the module provides them to the service (token `VIEW_RPC_PORTS`). */
export interface ViewRpcPorts {
  admission: MessageAdmission;
  limiter: RpcAdmission;
  inFlight: OperationRegistry;
  idempotency: IdempotencyPort;
  audit: AuditPort;
  notifications: NotificationPort;
}
