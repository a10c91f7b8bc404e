import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  AppHostError,
  GovernedReasons,
  isWidgetDescriptor,
  viewPolicyOf,
  type HostProfile,
  type LiveViewAnswer,
  VIEW_DOCUMENT_REFERENCE_FROM_BYTES,
  type OpenViewAnswer,
  type PlaceholderReason,
  type PlaceholderView,
  type SealedEnvelope,
  type ToolsetStatus,
  type WidgetDescriptor,
} from '@apphost/contracts';
import { buildViewCsp, documentUiMeta, iframeAllow, offeredHostCapabilities, selectAppDocument, type ImplementedHostCapabilities } from '@apphost/policy';
import type { PolicedReadResult } from '@apphost/mcp';
import type { Logger } from '@apphost/runtime';
import { SealedResultClient } from '@apphost/sealed-results';
import type { BatchConfig } from '../governed.config';
import { BATCH_CONFIG, BATCH_LOGGER } from '../governed.tokens';
import { describeFailure } from '../tool-batches/batch-plan';
import { ProducingGenerations, type ProducingGeneration } from './producing-generations';
import { callerMaySee, grantDigestOf, incarnationAdmits, mintGrant, newViewId, viewNotFound } from './view-access';
import { ViewCollaborators, type ViewGeneration } from './view-collaborators';
import { coldActionOf, defaultPolicy, recordOf, resourcePolicyOf, widgetOf, type Binding, type OpenRequest, type Opening } from './view-opening';
import { ViewRecords, type StoredView, type ViewRecord } from './view-records';

/**
 * What AppHost implements of the MCP Apps host capabilities: the View RPC (server tools and resources, logging), and
 * the conversation hooks with the modalities they serve (`ui/message` text; `ui/update-model-context` text and
 * structured content). Links are not opened by this build. The barrier checks a View's content against the same
 * intersection (`conversation/modalities.ts`).
 */
export const IMPLEMENTED_HOST_CAPABILITIES: ImplementedHostCapabilities = {
  serverTools: true,
  serverResources: true,
  logging: true,
  message: ['text'],
  updateModelContext: ['text', 'structuredContent'],
  openLinks: false,
};

/** The largest `resources/read` a View makes, for one item and in total (the bus contract's bound). */
const READ_LIMIT_BYTES = 8 * 1024 * 1024;

/**
 * The read's response-side policy (`readUnderPolicy`) refuses an item over `maxItemBytes` (the profile's document
 * limit) with the read's own reason: the caller of `open-view` gets this service's `DOCUMENT_TOO_LARGE` instead, as
 * for a document over the limit found at selection. Any other error is returned as it is.
 */
function documentTooLargeOf(error: unknown, resourceUri: string, maxBytes: number): unknown {
  if (!(error instanceof AppHostError) || error.details?.['reason'] !== 'READ_ITEM_TOO_LARGE') return error;
  return new AppHostError('PAYLOAD_TOO_LARGE', `a content item of ${resourceUri} is over the document limit of ${maxBytes} bytes`, {
    details: GovernedReasons.details('DOCUMENT_TOO_LARGE', { resourceUri, maxBytes }),
  });
}

/** What (3) and (4) answered, in that order. */
type Reads = [PromiseSettledResult<SealedEnvelope>, PromiseSettledResult<PolicedReadResult>];

/** A bootstrap step that ends in the read-only placeholder rather than an error. */
class Placeholder extends Error {
  constructor(readonly reason: PlaceholderReason) {
    super(reason);
  }
}

/**
 * The render bootstrap (`open-view`), in the RFC's order: (1) the caller, its principal, the session and the
 * widget; (2) the toolset, the profile, and a View reference on the recorded producing generation; (3) the sealed
 * record and (4) one `resources/read` of the descriptor's URI on that generation (two reads, asked together with
 * the reference and answered after it, in that order); (5) exactly one App document;
 * (6) the grant. A failure after (2) releases the reference and deletes the half-made View record before it is
 * answered; the placeholder cases (legacy widget, toolset revoked, generation gone or unrecorded, sealed record
 * missing or corrupt) answer a grantless placeholder View instead.
 */
@Injectable()
export class ViewBootstrap {
  private readonly sealed: SealedResultClient;

  constructor(
    @Inject(BusClient) private readonly bus: BusClient,
    @Inject(ViewCollaborators) private readonly peers: ViewCollaborators,
    @Inject(ViewRecords) private readonly records: ViewRecords,
    @Inject(ProducingGenerations) private readonly producers: ProducingGenerations,
    @Inject(BATCH_CONFIG) private readonly config: BatchConfig,
    @Inject(BATCH_LOGGER) private readonly logger: Logger,
  ) {
    this.sealed = new SealedResultClient(bus, { timeoutMs: config.storeTimeoutMs });
  }

  async open(request: OpenRequest): Promise<OpenViewAnswer> {
    // (1) Who asks, for which session and widget.
    const { caller, session } = request;
    if (!callerMaySee(caller, session)) throw viewNotFound();
    // Independent questions, asked together in one lifecycle-store request and read now; answered in the RFC's order:
    // a revoked principal wins over any session answer, the session over its event.
    const standing = await this.peers.widgetStanding(caller.principal, session, { eventId: request.eventId, functionCallId: request.functionCallId });
    const { revoked, session: current, event } = standing;
    if (revoked) throw new AppHostError('PERMISSION_DENIED', 'the principal was revoked', { details: GovernedReasons.details('PRINCIPAL_REVOKED') });
    if (!current) throw new AppHostError('NOT_FOUND', `session ${session.sessionId} of app ${session.appName} does not exist`);
    if (current.state !== 'ACTIVE' || !incarnationAdmits(caller, current.incarnation) || !event) throw viewNotFound();
    const incarnation = current.incarnation;
    if ('missing' in event) throw new AppHostError('NOT_FOUND', event.missing);
    const located = event.located;
    if (!located.widget) throw viewNotFound(); // an event-level reference renders nothing
    const viewId = newViewId();
    const base = { request, viewId, incarnation };

    if (!isWidgetDescriptor(located.widget)) {
      const widget = widgetOf(request, located.widget.resourceUri, located.widget.tool, null);
      return this.placeholder({ ...base, widget, policy: defaultPolicy(), tool: { nativeName: located.widget.tool } }, 'LEGACY_WIDGET', null);
    }

    // (2) The toolset must still be bound as the descriptor says; the View binds to the generation that produced it.
    const descriptor = located.widget;
    const { recordId } = descriptor.sealedResultRef ?? {};
    const [bound, found] = await Promise.allSettled([
      this.boundProfile(descriptor.toolsetId),
      recordId ? this.producers.find({ session, incarnation, functionCallId: request.functionCallId, recordId }) : null,
    ]);
    const { status, profile } = valueOf(bound);
    const producer = valueOf(found);
    // Without the producing record, the sealed refresh record still names the tool (best effort, for the placeholder).
    const sealedName = producer || located.call ? null : await this.sealedToolName(request, incarnation, descriptor);
    const opening: Opening = {
      ...base,
      widget: widgetOf(request, descriptor.resourceUri, producer?.tool ?? located.call?.name ?? sealedName ?? 'unknown', descriptor.toolsetId),
      policy: profile ? viewPolicyOf(profile) : defaultPolicy(),
      tool: { nativeName: producer?.nativeName ?? sealedName ?? located.call?.name ?? '', annotations: producer?.declaration['annotations'] },
    };
    const binding = { profileId: status?.profileId ?? null, bindingRevision: descriptor.bindingRevision, bindingGeneration: status?.bindingGeneration ?? null };
    if (!status || !profile || status.state !== 'PROFILE_BOUND' || status.bindingRevision !== descriptor.bindingRevision)
      return this.placeholder(opening, 'TOOLSET_REVOKED', binding);
    if (!producer || !descriptor.sealedResultRef) return this.placeholder(opening, 'GENERATION_GONE', binding);

    const generation: ViewGeneration = {
      generationId: producer.generation.generationId,
      fence: producer.generation.fence,
      ownerInstanceId: producer.generation.ownerInstanceId,
      connectionClass: producer.generation.connectionClass,
    };
    // The record (with its lease id) comes first, so a crash after the retain leaves a reference the sweep finds.
    const leaseId = randomUUID();
    const reserved = await this.records.create({
      ...recordOf(opening, 'live', 'OPENING', null, { ...binding, bindingGeneration: producer.generation.bindingGeneration }, generation),
      leaseId,
    });
    // The reference and the reads of (3) and (4) are asked together (pipelined, not reordered): the owner takes the
    // reference as the retain arrives, ahead of the read sent after it, and an in-flight read pins the generation on
    // its own. The answers are read in the RFC's order: a revoked session or a gone generation wins over any read.
    const reads = this.read(opening, descriptor, producer, profile);
    let retained: boolean;
    try {
      retained = await this.retainUnlessRevoked(reserved, generation, leaseId);
    } catch (error) {
      await this.records.delete(reserved);
      throw error;
    }
    if (!retained) {
      await this.records.delete(reserved);
      return this.placeholder(opening, 'GENERATION_GONE', binding);
    }
    try {
      return await this.activate(opening, reserved, descriptor, producer, profile, await reads);
    } catch (error) {
      const undone = await this.unreserve(reserved, generation, leaseId);
      // A record left to the sweep keeps its id: the placeholder gets another.
      if (error instanceof Placeholder) return this.placeholder(undone ? opening : { ...opening, viewId: newViewId() }, error.reason, binding);
      throw error;
    }
  }

  /**
   * (3) and (4): independent reads (neither has an effect), asked together; settled, never rejected, so a bootstrap
   * that stops at (2) leaves nothing unhandled.
   */
  private read(opening: Opening, descriptor: WidgetDescriptor, producer: ProducingGeneration, profile: HostProfile): Promise<Reads> {
    const maxItemBytes = Math.min(opening.policy.views.maxDocumentBytes, READ_LIMIT_BYTES);
    return Promise.allSettled([
      this.resolveSealed(opening, descriptor, producer.recordId),
      this.peers
        .readResource(producer.generation, {
          uri: descriptor.resourceUri,
          policy: resourcePolicyOf(profile),
          textReferenceFromBytes: VIEW_DOCUMENT_REFERENCE_FROM_BYTES,
          limits: { maxItemBytes, maxTotalBytes: READ_LIMIT_BYTES },
        })
        .catch((error: unknown) => {
          throw documentTooLargeOf(error, descriptor.resourceUri, maxItemBytes);
        }),
    ]);
  }

  /** Steps (3)–(6) on a reserved, referenced View, given what (3) and (4) answered. */
  private async activate(
    opening: Opening,
    reserved: StoredView,
    descriptor: WidgetDescriptor,
    producer: ProducingGeneration,
    profile: HostProfile,
    [resolved, answered]: Reads,
  ): Promise<LiveViewAnswer> {
    const { request, viewId, incarnation, policy } = opening;
    // Answered in order: a sealed record that fails is the answer even when the document read failed too.
    const envelope = valueOf(resolved);
    const read = valueOf(answered);
    const document = selectAppDocument(read.contents, { resourceUri: descriptor.resourceUri, maxBytes: policy.views.maxDocumentBytes });
    const listingMeta = (producer.declaration['_meta'] as Record<string, unknown> | undefined)?.['ui'];
    const meta = documentUiMeta(document.itemMeta?.['ui'], listingMeta);

    const capabilities = offeredHostCapabilities(profile.hostCapabilities, IMPLEMENTED_HOST_CAPABILITIES);
    const csp = buildViewCsp(meta['csp'], { development: this.config.views.development });
    if (capabilities.dropped.length > 0 || csp.rejected.length > 0)
      this.logger.info({ viewId, dropped: capabilities.dropped, cspRejected: csp.rejected }, 'view bootstrap: capabilities not offered, CSP entries dropped');

    // (6) The grant exists only in this answer: the record keeps its digest.
    const grant = mintGrant();
    const expiresAt = new Date(Date.now() + policy.views.leaseMs).toISOString();
    const live: ViewRecord = { ...reserved.record, state: 'ACTIVE', grantDigest: grantDigestOf(grant), leaseMs: policy.views.leaseMs, expiresAt };
    if (!(await this.records.update(reserved, live))) throw viewNotFound(); // revoked by the cascade meanwhile
    this.logger.info(
      {
        viewId,
        session: request.session.sessionId,
        incarnation,
        eventId: request.eventId,
        generationId: producer.generation.generationId,
        bytes: document.bytes,
      },
      'view opened',
    );
    return {
      mode: 'live',
      viewId,
      viewGeneration: 1,
      expiresAt,
      grant,
      document:
        document.htmlLiteralReference === undefined
          ? { resourceUri: descriptor.resourceUri, html: document.html, meta }
          : { resourceUri: descriptor.resourceUri, htmlLiteralReference: document.htmlLiteralReference, meta },
      widget: opening.widget,
      toolInput: { arguments: envelope.refresh.arguments.kind === 'inline' ? envelope.refresh.arguments.value : {} },
      toolResult: envelope.result as Record<string, unknown>,
      hostCapabilities: capabilities.offered,
      hostContext: { ...request.hostContext, toolInfo: { id: request.functionCallId, tool: producer.declaration } },
      csp,
      allow: iframeAllow(meta['permissions']),
    };
  }

  /** (3) The sealed record, digest-verified by the store, bound to this session, incarnation, event and call. */
  private async resolveSealed(opening: Opening, descriptor: WidgetDescriptor, recordId: string): Promise<SealedEnvelope> {
    const { request, incarnation } = opening;
    let envelope: SealedEnvelope;
    try {
      ({ envelope } = await this.sealed.resolve({
        session: request.session,
        incarnation,
        eventId: String(request.eventId),
        functionCallId: request.functionCallId,
        recordId,
      }));
    } catch (error) {
      if (error instanceof AppHostError && error.code === 'NOT_FOUND') throw new Placeholder('SEALED_RESULT_MISSING');
      if (error instanceof AppHostError && (error.code === 'DATA_LOSS' || error.code === 'INTERNAL')) {
        this.logger.warn({ viewId: opening.viewId, error: describeFailure(error) }, 'sealed record unreadable: placeholder');
        throw new Placeholder('SEALED_RESULT_CORRUPT');
      }
      throw error;
    }
    const { refresh } = envelope;
    if (refresh.correlation.functionCallId !== request.functionCallId || refresh.toolsetId !== descriptor.toolsetId) {
      this.logger.warn({ viewId: opening.viewId }, 'sealed record does not belong to its descriptor: placeholder');
      throw new Placeholder('SEALED_RESULT_CORRUPT');
    }
    return envelope;
  }

  /** A View written after the cascade revoked its incarnation is taken back at once: the session is being deleted. */
  private async refuseRevokedSession(created: StoredView): Promise<void> {
    if (!(await this.records.sessionRevoked(created.record.session, created.record.incarnation))) return;
    await this.records.delete(created);
    throw viewNotFound();
  }

  /**
   * The reference, taken while the revocation marker is read (both after the record is written, which is all the
   * cascade's guarantee needs). A revoked incarnation gives the reference back and answers not found.
   */
  private async retainUnlessRevoked(reserved: StoredView, generation: ViewGeneration, leaseId: string): Promise<boolean> {
    const { session, incarnation, viewId } = reserved.record;
    const [revoked, retained] = await Promise.allSettled([this.records.sessionRevoked(session, incarnation), this.peers.retain(generation, viewId, leaseId)]);
    if (revoked.status === 'fulfilled' && !revoked.value) return valueOf(retained);
    if (retained.status === 'fulfilled' && retained.value) await this.peers.release(generation, leaseId);
    if (revoked.status === 'rejected') throw revoked.reason;
    throw viewNotFound();
  }

  /** The native tool name of the widget's sealed refresh record, or null when the record cannot be read. */
  private async sealedToolName(request: OpenRequest, incarnation: number, descriptor: WidgetDescriptor): Promise<string | null> {
    if (!descriptor.sealedResultRef) return null;
    try {
      const { envelope } = await this.sealed.resolve({
        session: request.session,
        incarnation,
        eventId: String(request.eventId),
        functionCallId: request.functionCallId,
        recordId: descriptor.sealedResultRef.recordId,
      });
      return envelope.refresh.nativeToolName;
    } catch (error) {
      this.logger.warn({ functionCallId: request.functionCallId, error: describeFailure(error) }, 'the sealed record does not name the tool either');
      return null;
    }
  }

  /** Undoes a reservation: the reference back, the half-made record gone. */
  private async unreserve(reserved: StoredView, generation: ViewGeneration, leaseId: string): Promise<boolean> {
    try {
      await this.peers.release(generation, leaseId);
      // The reservation is usually unchanged: only when another change won is the record read again.
      if (await this.records.delete(reserved)) return true;
      const current = await this.records.find(reserved.record.viewId);
      if (current) await this.records.delete(current);
      return true;
    } catch (error) {
      // Left OPENING with its lease: the sweep releases it.
      this.logger.warn({ viewId: reserved.record.viewId, error: describeFailure(error) }, 'undoing a failed bootstrap failed: left to the sweep');
      return false;
    }
  }

  /** A grantless placeholder View: no HTML, no result, no generation, no lease; its cold actions. */
  private async placeholder(opening: Opening, reason: PlaceholderReason, binding: Binding | null): Promise<PlaceholderView> {
    const { action, replaySafe } = coldActionOf(opening);
    const record = { ...recordOf(opening, 'placeholder', 'ACTIVE', reason, binding, null), actions: [action], replaySafe };
    await this.refuseRevokedSession(await this.records.create(record));
    this.logger.info({ viewId: opening.viewId, session: opening.request.session.sessionId, reason, action: action.kind }, 'view placeholder');
    return { mode: 'placeholder', viewId: opening.viewId, reason, widget: opening.widget, actions: [action] };
  }

  /** The toolset's status and, when it names one, its profile (null when either is unknown). */
  private async boundProfile(toolsetId: string): Promise<{ status: ToolsetStatus | null; profile: HostProfile | null }> {
    const status = await this.peers.toolset(toolsetId);
    return { status, profile: status?.profileId ? await this.profileOrNull(status.profileId) : null };
  }

  private async profileOrNull(profileId: string): Promise<HostProfile | null> {
    try {
      return await this.peers.profile(profileId);
    } catch (error) {
      if (error instanceof AppHostError && error.code === 'NOT_FOUND') return null;
      throw error;
    }
  }
}

/** A lookup asked together with others, read in the RFC's order: its value, or its failure thrown now. */
function valueOf<T>(settled: PromiseSettledResult<T>): T {
  if (settled.status === 'rejected') throw settled.reason;
  return settled.value;
}
