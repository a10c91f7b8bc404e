import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { isNoResponders, RequestContexts } from '@apphost/bus';
import { canonicalize } from '@apphost/canonical-json';
import {
  AppHostError,
  ConnectionReasons,
  GovernedReasons,
  jsonRpcIdSchema,
  viewPolicyOf,
  type ErrorEnvelope,
  type GovernedViewRpc,
  type ParsedRequestOf,
  type ResponseOf,
  type ViewCaller,
  type ViewRevocationReason,
} from '@apphost/contracts';
import { admitArguments } from '@apphost/policy';
import type { Logger } from '@apphost/runtime';
import { ContextRegisters } from '../conversation/context-registers';
import { contextUpdateOf } from '../conversation/context-update';
import { ViewMessages } from '../conversation/view-messages';
import { BATCH_LOGGER, VIEW_RPC_PORTS } from '../governed.tokens';
import { describeFailure } from '../tool-batches/batch-plan';
import { assertOpenersGrant, findVisible } from '../views/view-access';
import { revocationOf, revocationReasonOf, revokedError } from '../views/view-checks';
import { isGenerationGone, ViewCollaborators } from '../views/view-collaborators';
import { ViewRecords } from '../views/view-records';
import { envelopeOf, idOfRejected, jsonRpcError, jsonRpcErrorOf, jsonRpcResult } from './json-rpc';
import type {
  AuditEntry,
  BarrierPass,
  IdempotencyScope,
  IdempotencyTicket,
  InFlightOperation,
  OperationTarget,
  ParsedViewMessage,
  RetainedOutcome,
  RpcSlot,
  ViewContext,
  ViewRpcPorts,
} from './ports';
import { ViewBarrier } from './view-barrier';
import { ViewOperations } from './view-operations';

type Request = Extract<ParsedViewMessage, { kind: 'request' }>;
type Notification = Extract<ParsedViewMessage, { kind: 'notification' }>;
type Answer = ResponseOf<typeof GovernedViewRpc>;

/** What the deadline keeps back from a tool call's timeout: the audit record and the settle that follow it. */
const DEADLINE_RESERVE_MS = 500;

/** Pause between attempts to record an idempotent outcome (within the deadline reserve). */
const COMPLETE_RETRY_MS = 50;

/** How one request ended, before it is answered: its outcome and what the audit record says of it. */
interface Done {
  outcome: RetainedOutcome;
  /** `executed`: it may have reached the server (or a retained outcome was delivered); `denied`: nothing ran. */
  decision: AuditEntry['decision'];
  replayed: boolean;
  pass: BarrierPass | null;
  seal: AuditEntry['seal'];
}

/**
 * The View RPC pipeline (`view-rpc.v1`), in the order `ports.ts` describes: authenticate the View and its grant (bus
 * errors), admit the message (structure, schemas, size), then for a request the limiter, the live id, the barrier
 * immediately before any effect, idempotency, the operation on the View's own generation, the audit record, and the
 * settle (a cancel that won answers `cancelled`). Every failure after authentication is a JSON-RPC error.
 */
@Injectable()
export class ViewRpcService {
  constructor(
    @Inject(ViewRecords) private readonly records: ViewRecords,
    @Inject(ViewCollaborators) private readonly peers: ViewCollaborators,
    @Inject(ViewBarrier) private readonly barrier: ViewBarrier,
    @Inject(ViewOperations) private readonly operations: ViewOperations,
    @Inject(ContextRegisters) private readonly registers: ContextRegisters,
    @Inject(ViewMessages) private readonly messages: ViewMessages,
    @Inject(VIEW_RPC_PORTS) private readonly ports: ViewRpcPorts,
    @Inject(BATCH_LOGGER) private readonly logger: Logger,
  ) {}

  async handle(r: ParsedRequestOf<typeof GovernedViewRpc>): Promise<Answer> {
    const ctx = await this.authenticate(r.caller, r.viewId, r.grant);
    let message: ParsedViewMessage;
    try {
      message = this.ports.admission.parse(r.message, r.bytes, ctx.policy);
    } catch (error) {
      if (!(error instanceof AppHostError)) this.logger.error({ viewId: r.viewId, error: describeFailure(error) }, 'view rpc: admission failed unexpectedly');
      // JSON-RPC never answers a notification, not even one it refuses (an unknown or malformed one): logged, accepted.
      if (isNotification(r.message)) {
        this.logger.info({ viewId: r.viewId, error: describeFailure(error) }, 'view rpc: a refused notification ignored');
        return { kind: 'accepted' };
      }
      return { kind: 'response', response: jsonRpcError(idOfRejected(error), error) };
    }
    if (message.kind === 'notification') {
      await this.notify(ctx, message);
      return { kind: 'accepted' };
    }
    return this.request(ctx, message, r.caller, r.attested);
  }

  /** The View, visible to the caller, whose grant the caller holds as its opener; its profile and policy. */
  private async authenticate(caller: ViewCaller, viewId: string, grant: string): Promise<ViewContext> {
    const view = await findVisible(this.records, caller, viewId);
    assertOpenersGrant(view.record, caller, grant);
    // A live View was opened under a bound profile; a record without one can only have been revoked since.
    if (!view.record.profileId) throw revokedError('TOOLSET_REVOKED');
    const profile = await this.peers.profile(view.record.profileId);
    return { view, profile, policy: viewPolicyOf(profile) };
  }

  /** JSON-RPC never answers a notification: one that fails is logged, and still accepted. */
  private async notify(ctx: ViewContext, message: Notification): Promise<void> {
    const { viewId } = ctx.view.record;
    try {
      if (ctx.view.record.state !== 'ACTIVE') {
        this.logger.info({ viewId, method: message.method }, 'view rpc: notification of an ended view ignored');
        return;
      }
      if (message.method !== 'notifications/cancelled') return await this.ports.notifications.handle(ctx, message.method, message.params);
      const id = jsonRpcIdSchema.safeParse(message.params['requestId']);
      if (!id.success) return this.logger.info({ viewId }, 'view rpc: notifications/cancelled without a valid requestId ignored');
      const cancelled = await this.ports.inFlight.cancel(ctx, id.data);
      if (!cancelled) this.logger.info({ viewId, requestId: id.data }, 'view rpc: cancel of no live request ignored');
    } catch (error) {
      this.logger.warn({ viewId, method: message.method, error: describeFailure(error) }, 'view rpc: notification failed (accepted all the same)');
    }
  }

  private async request(ctx: ViewContext, message: Request, caller: ViewCaller, attested: readonly string[]): Promise<Answer> {
    const started = Date.now();
    let target: OperationTarget;
    try {
      target = targetOf(message);
    } catch (error) {
      return { kind: 'response', response: jsonRpcError(message.id, error) };
    }
    let slot: RpcSlot | null = null;
    try {
      let operation: InFlightOperation;
      try {
        // Rate, queue slot and the live id in one store step.
        const pending = this.ports.inFlight.prepare(ctx, message.id, message.method);
        slot = await this.ports.limiter.admit(ctx, pending);
        operation = pending.claimed();
      } catch (error) {
        const done = denied(error);
        // A refusal of the limiter is never written to the ledger one by one (a flood would be a ledger write per
        // request): the limiter counts it per View, and it is logged.
        if (isRateRefusal(error))
          this.logger.info(
            { viewId: ctx.view.record.viewId, reason: reasonOf(done.outcome.kind === 'error' ? done.outcome.error : null) },
            'view rpc: refused by the limiter',
          );
        else await this.audit(ctx, message, target, done, true, started);
        return { kind: 'response', response: responseOf(message, done.outcome) };
      }
      const ran = await this.run(ctx, message, target, operation, caller, attested);
      // Independent (neither throws): the record read again, and the terminal outcome recorded against a cancel.
      const [done, delivered] = await Promise.all([this.stillLive(ctx, ran), this.settle(ctx, operation)]);
      await this.audit(ctx, message, target, done, delivered, started);
      return delivered ? { kind: 'response', response: responseOf(message, done.outcome) } : { kind: 'cancelled' };
    } finally {
      await slot?.release().catch((error: unknown) => this.logger.warn({ error: describeFailure(error) }, 'view rpc: releasing an admission slot failed'));
    }
  }

  /** Barrier, idempotency, execution: never throws (every failure is the request's outcome). */
  private async run(
    ctx: ViewContext,
    message: Request,
    target: OperationTarget,
    operation: InFlightOperation,
    caller: ViewCaller,
    attested: readonly string[],
  ): Promise<Done> {
    let pass: BarrierPass;
    try {
      if (target.kind === 'tool') admitArguments([{ arguments: target.arguments }]);
      if (target.kind === 'message') await this.messages.admit(ctx, target, attested);
      pass = await this.barrier.check(ctx, target, caller);
    } catch (error) {
      if (!(error instanceof AppHostError))
        this.logger.error({ viewId: ctx.view.record.viewId, error: describeFailure(error) }, 'view rpc: the barrier failed');
      return denied(await this.goneIsRevoked(ctx, error));
    }
    const key = message.idempotencyKey;
    if (key === null || (target.kind !== 'tool' && target.kind !== 'read')) return (await this.execute(ctx, message, target, pass, operation, caller)).done;
    let ticket;
    try {
      ticket = await this.ports.idempotency.begin(
        scopeOf(ctx, pass),
        key,
        identityOf(ctx, message.method, target, pass),
        ctx.policy.idempotency.retentionMs,
        deadlineAt(ctx),
      );
    } catch (error) {
      return denied(error, pass);
    }
    if (ticket.kind === 'retained') {
      // The wait for an in-flight first use may have lasted up to the deadline: the View is asked again before delivery.
      try {
        await this.barrier.check(ctx, target, caller);
      } catch (error) {
        return denied(await this.goneIsRevoked(ctx, error), pass);
      }
      return { outcome: ticket.outcome, decision: 'executed', replayed: true, pass, seal: null };
    }
    const { done, ranNothing } = await this.execute(ctx, message, target, pass, operation, caller);
    await this.finish(ctx, ticket, ranNothing ? null : done.outcome, target.kind === 'read' ? readTtlOf(done.outcome) : undefined);
    return done;
  }

  /**
   * Records the idempotent outcome (null: nothing ran, the key is free again), retried until the deadline reserve is
   * spent: a claim left to lapse would let the next use of the key run again.
   */
  private async finish(
    ctx: ViewContext,
    ticket: Extract<IdempotencyTicket, { kind: 'execute' }>,
    outcome: RetainedOutcome | null,
    retentionMs: number | undefined,
  ): Promise<void> {
    const until = Date.now() + Math.min(DEADLINE_RESERVE_MS / 2, Math.max(0, (RequestContexts.remainingMs() ?? DEADLINE_RESERVE_MS) - DEADLINE_RESERVE_MS / 2));
    for (let attempt = 1; ; attempt++) {
      try {
        return await (outcome === null ? ticket.abandon() : ticket.complete(outcome, retentionMs));
      } catch (error) {
        if (Date.now() + COMPLETE_RETRY_MS > until) {
          // The outcome is delivered all the same; a retry with the key finds the first use unfinished (or expired).
          this.logger.warn({ viewId: ctx.view.record.viewId, attempt, error: describeFailure(error) }, 'view rpc: recording the idempotent outcome failed');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, COMPLETE_RETRY_MS));
      }
    }
  }

  /**
   * A result is delivered only to a View still live as it passed the barrier: a teardown or revocation while the
   * operation ran turns it into VIEW_REVOKED (nothing sealed; the audit says why).
   */
  private async stillLive(ctx: ViewContext, done: Done): Promise<Done> {
    if (done.outcome.kind !== 'result') return done;
    const opened = ctx.view.record;
    let reason: ViewRevocationReason | null;
    try {
      const record = (await this.records.find(opened.viewId))?.record;
      const same =
        record?.state === 'ACTIVE' && record.grantDigest === opened.grantDigest && record.generation?.generationId === opened.generation?.generationId;
      reason = same ? null : record ? revocationReasonOf(record) : 'TORN_DOWN';
    } catch (error) {
      // Unknown: the result is delivered (the barrier passed; a failing read of the record is no revocation).
      this.logger.warn({ viewId: opened.viewId, error: describeFailure(error) }, 'view rpc: re-reading the view before delivery failed');
      return done;
    }
    if (reason === null) return done;
    // `executed`: the operation ran (its effects stand); only its result is withheld — never a refusal.
    const withheld = revokedError(reason);
    const error = new AppHostError(withheld.code, `${withheld.message}: the operation ran, its result is withheld`, {
      details: { ...withheld.details, executed: true },
    });
    return { ...done, outcome: { kind: 'error', error: envelopeOf(error) }, seal: null };
  }

  /** The operation on the View's generation. `ranNothing`: it never reached the server (an idempotency key stays free). */
  private async execute(
    ctx: ViewContext,
    message: Request,
    target: OperationTarget,
    pass: BarrierPass,
    operation: InFlightOperation,
    caller: ViewCaller,
  ): Promise<{ done: Done; ranNothing: boolean }> {
    // A cancel that won while the barrier ran: nothing is dispatched (the settle answers `cancelled`).
    if (await this.cancelledBeforeDispatch(ctx, operation)) {
      const error = new AppHostError('FAILED_PRECONDITION', 'the request was cancelled before it ran', { details: ConnectionReasons.details('CANCELLED') });
      return { done: denied(error, pass), ranNothing: true };
    }
    try {
      const result = await this.dispatch(ctx, message, target, pass, operation, caller);
      const seal = target.kind === 'tool' && pass.tool?.resourceUri ? { tool: pass.tool, arguments: target.arguments, result } : null;
      return { done: { outcome: { kind: 'result', result }, decision: 'executed', replayed: false, pass, seal }, ranNothing: false };
    } catch (error) {
      // Only what certainly reached no server frees the key: any other failure (an UNAVAILABLE the MCP client made of
      // an unknown error, possibly after sending) is the key's outcome.
      // A generation that died under the operation (`inFlight`) may have run it: its outcome is unknown, not a denial.
      const diedUnder = isGenerationGone(error) && (error as AppHostError).details?.['inFlight'] === true;
      const ranNothing = (isGenerationGone(error) && !diedUnder) || notSent(error) || (error instanceof AppHostError && isStaleContext(error));
      if (!(error instanceof AppHostError)) this.logger.error({ viewId: ctx.view.record.viewId, error: describeFailure(error) }, 'view rpc: operation failed');
      const failure = diedUnder ? await this.diedUnder(ctx, error) : await this.goneIsRevoked(ctx, error);
      const outcome = { kind: 'error' as const, error: envelopeOf(failure) };
      return { done: { outcome, decision: ranNothing ? 'denied' : 'executed', replayed: false, pass, seal: null }, ranNothing };
    }
  }

  private dispatch(
    ctx: ViewContext,
    message: Request,
    target: OperationTarget,
    pass: BarrierPass,
    operation: InFlightOperation,
    caller: ViewCaller,
  ): Promise<Record<string, unknown>> {
    switch (message.method) {
      case 'tools/call':
        if (target.kind !== 'tool' || !pass.tool) throw new AppHostError('INTERNAL', 'a tools/call passed the barrier without its tool');
        return this.operations.callTool(pass, pass.tool, target.arguments, operation.callId, callTimeoutOf(ctx));
      case 'resources/read':
        if (!pass.canonicalUri) throw new AppHostError('INTERNAL', 'a resources/read passed the barrier without its URI');
        return this.operations.readResource(ctx, pass, pass.canonicalUri);
      case 'tools/list':
        return this.operations.listTools(pass);
      case 'resources/list':
        return this.operations.listResources(ctx, pass);
      case 'resources/templates/list':
        return this.operations.listResourceTemplates(ctx, pass);
      case 'ping':
        // The barrier asked the owner whether the generation lives: nothing else to ask upstream.
        return Promise.resolve({});
      case 'ui/update-model-context':
        if (target.kind !== 'context') throw new AppHostError('INTERNAL', 'a ui/update-model-context passed the barrier without its update');
        return this.registers.commit(ctx, target.update);
      case 'ui/message':
        if (target.kind !== 'message') throw new AppHostError('INTERNAL', 'a ui/message passed the barrier without its content');
        return this.messages.deliver(ctx, pass, target, caller);
    }
  }

  /** Whether a cancel is recorded for the request already (read live; a failing read dispatches: the settle still decides). */
  private async cancelledBeforeDispatch(ctx: ViewContext, operation: InFlightOperation): Promise<boolean> {
    try {
      return await operation.cancelled();
    } catch (error) {
      this.logger.warn({ viewId: ctx.view.record.viewId, error: describeFailure(error) }, 'view rpc: reading the live request before dispatch failed');
      return false;
    }
  }

  /**
   * The View's connection died while the operation ran on it: the View ends (GENERATION_GONE) and is told the outcome
   * is unknown (it may have run), never that it was refused.
   */
  private async diedUnder(ctx: ViewContext, error: unknown): Promise<AppHostError> {
    await this.barrier.revoke(ctx.view.record.viewId, await this.whyGone(ctx)).catch(() => undefined);
    return new AppHostError('OUTCOME_UNKNOWN', 'the connection ended while the operation ran on it: it may have run', {
      details: { ...((error as AppHostError).details ?? {}) },
    });
  }

  /** A generation found gone ends the View (GENERATION_GONE): the View is told it was revoked. */
  private async goneIsRevoked(ctx: ViewContext, error: unknown): Promise<unknown> {
    if (!isGenerationGone(error)) return error;
    return this.barrier.revoke(ctx.view.record.viewId, await this.whyGone(ctx)).catch((revoked: unknown) => revoked);
  }

  /**
   * Why the View's generation is gone: a revocation or rebind closes generations, so the View is told that cause
   * (checked in the same order as everywhere), and GENERATION_GONE only when nothing else explains it.
   */
  private async whyGone(ctx: ViewContext): Promise<ViewRevocationReason> {
    const { record } = ctx.view;
    const reason = await revocationOf(record, record.opener, this.peers, Date.now()).catch(() => null);
    return reason ?? 'GENERATION_GONE';
  }

  /** First terminal outcome wins; a settle that cannot be recorded still delivers (a cancel is best effort). */
  private async settle(ctx: ViewContext, operation: InFlightOperation): Promise<boolean> {
    try {
      return await operation.settle();
    } catch (error) {
      this.logger.warn({ viewId: ctx.view.record.viewId, error: describeFailure(error) }, 'view rpc: settling a request failed: its response is delivered');
      return true;
    }
  }

  /** One app audit record per request after admission; a failing audit never loses a result (logged, delivered). */
  private async audit(ctx: ViewContext, message: Request, target: OperationTarget, done: Done, delivered: boolean, started: number): Promise<void> {
    const error = done.outcome.kind === 'error' ? done.outcome.error : null;
    const entry: AuditEntry = {
      method: message.method,
      tool: target.kind === 'tool' ? target.name.slice(0, 256) : null,
      uri: target.kind === 'read' ? (done.pass?.canonicalUri ?? target.uri).slice(0, 2048) : null,
      decision: done.decision,
      outcome: !delivered ? 'cancelled' : error ? error.code : 'ok',
      reason: reasonOf(error),
      replayed: done.replayed,
      durationMs: Math.max(0, Date.now() - started),
      seal: delivered ? done.seal : null,
    };
    try {
      await this.ports.audit.record(ctx, entry);
    } catch (failure) {
      this.logger.warn(
        { viewId: ctx.view.record.viewId, method: entry.method, outcome: entry.outcome, error: describeFailure(failure) },
        'view rpc: the audit record failed',
      );
    }
  }
}

/** What the operation targets, read from the admitted params (admission validated their shape already). */
function targetOf(message: Request): OperationTarget {
  const { params } = message;
  switch (message.method) {
    case 'tools/call': {
      const args = params['arguments'] ?? {};
      if (typeof params['name'] !== 'string' || typeof args !== 'object' || args === null || Array.isArray(args)) throw invalidParams('tools/call');
      return { kind: 'tool', name: params['name'], arguments: args as Record<string, unknown> };
    }
    case 'resources/read':
      if (typeof params['uri'] !== 'string') throw invalidParams('resources/read');
      return { kind: 'read', uri: params['uri'] };
    case 'ping':
      return { kind: 'ping' };
    case 'ui/update-model-context':
      return { kind: 'context', update: contextUpdateOf(params) };
    case 'ui/message':
      if (!Array.isArray(params['content'])) throw invalidParams('ui/message');
      return { kind: 'message', blocks: params['content'] as Record<string, unknown>[] };
    default:
      return { kind: 'list' };
  }
}

/** A JSON-RPC 2.0 notification by its shape: one object with a method and no `id` member. */
function isNotification(message: unknown): boolean {
  return (
    typeof message === 'object' &&
    message !== null &&
    !Array.isArray(message) &&
    (message as Record<string, unknown>)['jsonrpc'] === '2.0' &&
    typeof (message as Record<string, unknown>)['method'] === 'string' &&
    !('id' in message)
  );
}

/**
 * How long a read's result may be kept: the server's `ttlMs` (a top-level result member, as the MCP SDK's cache hints
 * put it; 0: not at all). Undefined without one (the profile's retention).
 */
function readTtlOf(outcome: RetainedOutcome): number | undefined {
  const ttl = outcome.kind === 'result' ? outcome.result['ttlMs'] : undefined;
  return typeof ttl === 'number' && Number.isFinite(ttl) && ttl >= 0 ? ttl : undefined;
}

/** The bus says the request was never sent, or nothing served it: it reached no server. */
function notSent(error: unknown): boolean {
  if (isNoResponders(error)) return true;
  const transport = error instanceof AppHostError && error.code === 'UNAVAILABLE' ? error.details?.['transport'] : undefined;
  return transport === 'disconnected' || transport === 'closed';
}

/** The limiter's refusals (rate, queue depth): counted and logged, not audited one by one. */
function isRateRefusal(error: unknown): boolean {
  const reason = error instanceof AppHostError ? error.details?.['reason'] : undefined;
  return reason === 'RPC_RATE_LIMITED' || reason === 'RPC_QUEUE_FULL';
}

/** A model-context commit that lost to a teardown or a newer update: nothing changed (audited as denied). */
function isStaleContext(error: AppHostError): boolean {
  return error.details?.['reason'] === 'CONTEXT_UPDATE_STALE';
}

function invalidParams(method: string): AppHostError {
  return new AppHostError('INVALID_ARGUMENT', `the params of ${method} are malformed`, { details: GovernedReasons.details('RPC_INVALID_PARAMS') });
}

function denied(error: unknown, pass: BarrierPass | null = null): Done {
  return { outcome: { kind: 'error', error: envelopeOf(error) }, decision: 'denied', replayed: false, pass, seal: null };
}

function responseOf(message: Request, outcome: RetainedOutcome) {
  return outcome.kind === 'result' ? jsonRpcResult(message.id, outcome.result) : jsonRpcErrorOf(message.id, outcome.error);
}

function reasonOf(error: ErrorEnvelope | null): string | null {
  const reason = error?.details?.['reason'];
  return typeof reason === 'string' ? reason.slice(0, 128) : null;
}

/** The key's namespace: the principal, the View, its binding, session incarnation and generation; reads add the policy revision. */
function scopeOf(ctx: ViewContext, pass: BarrierPass): IdempotencyScope {
  const { record } = ctx.view;
  return {
    principalDigest: record.principalDigest,
    viewId: record.viewId,
    toolsetId: pass.generation.toolsetId,
    bindingRevision: record.bindingRevision ?? '',
    session: pass.session,
    incarnation: pass.incarnation,
    generationId: pass.generation.generationId,
    policyRevision: pass.canonicalUri !== null ? `${ctx.profile.resourcePolicy.revision}/${ctx.profile.limits.revision}` : null,
  };
}

/** The operation's identity under a key: method, toolset and server, tool and canonical arguments (reads: canonical URI). */
function identityOf(ctx: ViewContext, method: Request['method'], target: OperationTarget, pass: BarrierPass): string {
  const toolsetId = pass.generation.toolsetId;
  const identity =
    target.kind === 'tool'
      ? { method, toolsetId, serverId: ctx.view.record.serverId, tool: target.name, arguments: target.arguments }
      : { method, toolsetId, uri: pass.canonicalUri };
  return createHash('sha256').update('apphost.view-rpc-identity.v1\n', 'utf8').update(canonicalize(identity), 'utf8').digest('hex');
}

/** The profile's call timeout, shortened to what the bus request's deadline leaves (less the audit's reserve). */
function callTimeoutOf(ctx: ViewContext): number {
  const limit = ctx.profile.limits.callTimeoutMs;
  const left = RequestContexts.remainingMs();
  return Math.max(1, Math.min(limit, left === undefined ? limit : left - DEADLINE_RESERVE_MS));
}

/** Until when an in-flight first use of a key is waited for: the request's deadline (the call timeout without one). */
function deadlineAt(ctx: ViewContext): number {
  return Date.now() + (RequestContexts.remainingMs() ?? ctx.profile.limits.callTimeoutMs);
}
