import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  AppHostError,
  GovernedReasons,
  isWidgetDescriptor,
  LifecycleGetSession,
  type GovernedCloseView,
  type GovernedGetView,
  type GovernedRenewView,
  type GovernedReplayView,
  type ParsedRequestOf,
  type ResponseOf,
  type ViewCaller,
  type ViewSnapshot,
} from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { SealedResultClient } from '@apphost/sealed-results';
import type { BatchConfig } from '../governed.config';
import { BATCH_CONFIG, BATCH_LOGGER } from '../governed.tokens';
import { ToolBatchService } from '../tool-batches/tool-batch.service';
import { ProducingGenerations } from './producing-generations';
import { assertOpenersGrant, findVisible, principalDigestOf, viewNotFound } from './view-access';
import { ViewBootstrap } from './view-bootstrap';
import { revocationOf, revocationReasonOf, revokedError } from './view-checks';
import { ViewCollaborators } from './view-collaborators';
import { ViewRecords, type StoredView, type ViewRecord } from './view-records';
import { ViewTeardown } from './view-teardown';

/**
 * The owner's operations on a View after its bootstrap: read it (re-checking lazily what can revoke it), renew its
 * lease with the grant, close it (two-phase, idempotent), and the placeholder's cold actions (a new invocation through
 * the normal tool-batch path, then a View of the new widget). A View of another session, tenant or user, or one
 * a view token for another session names, is NOT_FOUND.
 */
@Injectable()
export class ViewService {
  private readonly sealed: SealedResultClient;

  constructor(
    @Inject(ViewRecords) private readonly records: ViewRecords,
    @Inject(ProducingGenerations) private readonly producers: ProducingGenerations,
    @Inject(ViewCollaborators) private readonly peers: ViewCollaborators,
    @Inject(ViewTeardown) private readonly teardown: ViewTeardown,
    @Inject(ViewBootstrap) private readonly bootstrap: ViewBootstrap,
    @Inject(ToolBatchService) private readonly batches: ToolBatchService,
    @Inject(BusClient) private readonly bus: BusClient,
    @Inject(BATCH_CONFIG) config: BatchConfig,
    @Inject(BATCH_LOGGER) private readonly logger: Logger,
  ) {
    this.sealed = new SealedResultClient(bus, { timeoutMs: config.storeTimeoutMs });
  }

  async get(r: ParsedRequestOf<typeof GovernedGetView>): Promise<ViewSnapshot> {
    const stored = await this.visible(r.caller, r.viewId);
    return snapshotOf((await this.current(stored, r.caller)).record);
  }

  async close(r: ParsedRequestOf<typeof GovernedCloseView>): Promise<ResponseOf<typeof GovernedCloseView>> {
    await this.visible(r.caller, r.viewId);
    const ended = await this.teardown.end(r.viewId, 'TORN_DOWN');
    return { closed: ended?.ended ?? false };
  }

  async renew(r: ParsedRequestOf<typeof GovernedRenewView>): Promise<ResponseOf<typeof GovernedRenewView>> {
    let stored = await this.visible(r.caller, r.viewId);
    assertOpenersGrant(stored.record, r.caller, r.grant);
    if (stored.record.state !== 'ACTIVE') throw revokedError(revocationReasonOf(stored.record));
    if (await this.peers.principalRevoked(r.caller.principal)) {
      await this.teardown.end(r.viewId, 'PRINCIPAL_REVOKED');
      throw new AppHostError('PERMISSION_DENIED', 'the principal was revoked', { details: GovernedReasons.details('PRINCIPAL_REVOKED') });
    }
    const reason = await revocationOf(stored.record, null, this.peers, Date.now());
    if (reason) {
      await this.teardown.end(r.viewId, reason);
      throw revokedError(reason);
    }
    for (let attempt = 0; attempt < 8; attempt++) {
      const record = stored.record;
      if (record.state !== 'ACTIVE') throw revokedError(revocationReasonOf(record));
      const expiresAt = new Date(Date.now() + (record.leaseMs ?? 0)).toISOString();
      if (await this.records.update(stored, { ...record, expiresAt })) return { viewId: r.viewId, expiresAt };
      const again = await this.records.find(r.viewId);
      if (!again) throw viewNotFound();
      stored = again;
    }
    throw new AppHostError('UNAVAILABLE', 'the view kept changing while it was being renewed', { retryable: true });
  }

  async replay(r: ParsedRequestOf<typeof GovernedReplayView>): Promise<ResponseOf<typeof GovernedReplayView>> {
    const { record } = await this.visible(r.caller, r.viewId);
    if (record.mode !== 'placeholder')
      throw new AppHostError('FAILED_PRECONDITION', 'only a placeholder view can be refreshed or re-run', {
        details: GovernedReasons.details('VIEW_NOT_PLACEHOLDER'),
      });
    if (record.state !== 'ACTIVE') throw revokedError(revocationReasonOf(record));
    if (r.action === 'refresh' && !record.replaySafe)
      throw new AppHostError('FAILED_PRECONDITION', "the profile's replay classification does not call this tool replay-safe: use rerun", {
        details: GovernedReasons.details('REPLAY_NOT_SAFE'),
      });
    if (await this.peers.principalRevoked(r.caller.principal))
      throw new AppHostError('PERMISSION_DENIED', 'the principal was revoked', { details: GovernedReasons.details('PRINCIPAL_REVOKED') });
    const current = await this.bus.request(LifecycleGetSession, { session: record.session });
    if (current.state !== 'ACTIVE' || current.incarnation !== record.incarnation) throw viewNotFound();

    const args = await this.argumentsOf(record);
    const functionCallId = replayCallIdOf(record.viewId, r.invocationId);
    this.logger.info({ viewId: record.viewId, action: r.action, invocationId: r.invocationId, functionCallId }, 'view replay: a new invocation');
    const event = await this.batches.run({
      principal: r.caller.principal,
      session: record.session,
      invocationId: r.invocationId,
      calls: [{ functionCallId, tool: record.widget.tool, arguments: args }],
    });
    const widget = event.widgets.find((w) => !isWidgetDescriptor(w) || w.correlation.functionCallId === functionCallId);
    const view = widget
      ? await this.bootstrap.open({
          caller: r.caller,
          session: record.session,
          eventId: event.eventId,
          functionCallId,
          ...(r.hostContext ? { hostContext: r.hostContext } : {}),
        })
      : null;
    return { event, view };
  }

  /** Cascade revoke: every View of the incarnation (and below) ended SESSION_DELETED, its reference given back. */
  async revokeSession(session: ViewRecord['session'], incarnation: number): Promise<number> {
    await this.records.markSessionRevoked(session, incarnation);
    let revoked = 0;
    for (const { viewId } of await this.records.ofSession(session, incarnation)) {
      const ended = await this.teardown.end(viewId, 'SESSION_DELETED');
      if (ended?.ended) revoked++;
      if (ended && !ended.view.record.released)
        throw new AppHostError('UNAVAILABLE', 'a view reference of the session could not be released yet', { retryable: true });
    }
    return revoked;
  }

  /** Cascade purge: revokes (idempotent), then deletes every View record (its register with it) of the incarnation and below. */
  async purgeSession(session: ViewRecord['session'], incarnation: number): Promise<number> {
    await this.revokeSession(session, incarnation);
    const views = await this.records.ofSession(session, incarnation);
    for (const { viewId, indexKey } of views) await this.records.purge(viewId, indexKey);
    // The registers went with their records; the commit sequences go too.
    await this.records.purgeContextSequences(session, incarnation);
    return views.length;
  }

  /** The View if the caller may see it; NOT_FOUND otherwise (and for a bootstrap still in progress). */
  private visible(caller: ViewCaller, viewId: string): Promise<StoredView> {
    return findVisible(this.records, caller, viewId);
  }

  /** The View as it stands now: lazily revoked when something revoked it, an unfinished teardown finished. */
  private async current(stored: StoredView, caller: ViewCaller): Promise<StoredView> {
    const { record } = stored;
    if (record.state !== 'ACTIVE') return this.teardown.finish(stored);
    const opener = principalDigestOf(caller.principal) === record.principalDigest ? caller.principal : null;
    const reason = await revocationOf(record, opener, this.peers, Date.now());
    if (!reason) return stored;
    return (await this.teardown.end(record.viewId, reason))?.view ?? stored;
  }

  /**
   * The arguments of the widget's call: as the event recorded them, the legacy payload's, the sealed refresh
   * record's, or (a sealed record gone or unreadable) the producing-generation record's.
   */
  private async argumentsOf(record: ViewRecord): Promise<Record<string, unknown>> {
    const located = await this.peers.getEvent({
      session: record.session,
      incarnation: record.incarnation,
      eventId: record.widget.eventId,
      functionCallId: record.widget.functionCallId,
    });
    if (located.call) return located.call.args;
    if (located.widget && !isWidgetDescriptor(located.widget)) return located.widget.toolArgs;
    if (located.sealedResultRef) {
      try {
        const { envelope } = await this.sealed.resolve({
          session: record.session,
          incarnation: record.incarnation,
          eventId: String(record.widget.eventId),
          functionCallId: record.widget.functionCallId,
          recordId: located.sealedResultRef.recordId,
        });
        if (envelope.refresh.arguments.kind === 'inline') return envelope.refresh.arguments.value;
      } catch (error) {
        if (!(error instanceof AppHostError) || !['NOT_FOUND', 'DATA_LOSS', 'INTERNAL'].includes(error.code)) throw error;
      }
    }
    const producer = located.sealedResultRef
      ? await this.producers.find({
          session: record.session,
          incarnation: record.incarnation,
          functionCallId: record.widget.functionCallId,
          recordId: located.sealedResultRef.recordId,
        })
      : null;
    if (producer) return producer.arguments;
    throw new AppHostError('FAILED_PRECONDITION', "the widget's call arguments are no longer recorded: ask the model to call the tool again");
  }
}

/** The function-call id of a replay: derived from the View and the caller's invocation id (a retry reuses it). */
export function replayCallIdOf(viewId: string, invocationId: string): string {
  return `rp-${createHash('sha256').update(`${viewId}\n${invocationId}`).digest('hex').slice(0, 32)}`;
}

function snapshotOf(record: ViewRecord): ViewSnapshot {
  const state = record.state === 'OPENING' ? 'ACTIVE' : record.state;
  return {
    viewId: record.viewId,
    mode: record.mode,
    state,
    reason: state === 'ACTIVE' && record.mode === 'live' ? null : record.reason,
    session: record.session,
    incarnation: record.incarnation,
    widget: record.widget,
    viewGeneration: record.viewGeneration,
    generation: record.generation
      ? { generationId: record.generation.generationId, fence: record.generation.fence, ownerInstanceId: record.generation.ownerInstanceId }
      : null,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    teardownRequestedAt: record.teardownRequestedAt,
  };
}
