import { randomBytes } from 'node:crypto';
import type { BusClient } from '@apphost/bus';
import type { CoordinationStore } from '@apphost/coordination';
import {
  APP_AUDIT_METADATA_KEY,
  AppHostError,
  appAuditRecordSchema,
  LifecycleAppendEvents,
  type AppAuditRecord,
  type DescriptorSealedResultRef,
  type LedgerEventInput,
  type ResponseOf,
  type SealedEnvelope,
} from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import type { SealedResultClient } from '@apphost/sealed-results';
import { retryWithinDeadline } from '../calls/deadline-retry';
import { describeFailure } from '../tool-batches/batch-plan';
import { AuditRetention } from './audit-retention';
import type { AuditEntry, AuditPort, ViewContext } from './ports';

/** Who app audit events are by. */
export const APP_AUDIT_AUTHOR = 'apphost-view';

/** What the sealing retries leave of the deadline for the append and the commit that follow (as the model path). */
const APPEND_RESERVE_MS = 2_000;

export interface AppAuditOptions {
  /** Bus timeout of the append and of a compaction (e.g. `GOVERNED_STORE_TIMEOUT_MS`). */
  timeoutMs: number;
  /** TTL of the PENDING sealed records (absent: the store's default), as `GOVERNED_SEAL_PENDING_TTL_MS` for the model path. */
  pendingTtlMs?: number;
}

/** A sealed result as the event lists it. */
interface Sealed {
  functionCallId: string;
  name: string;
  ref: DescriptorSealedResultRef;
}

/**
 * The app audit trail of View operations: ONE ledger event per operation (`provenance: app-operation`, so the
 * finalizer stamps `audience: app_audit`, `invocationOrigin: mcp_app`, `immediateCaller: app`), whose
 * `customMetadata["io.apphost/app-audit"]` is the operation record — never result bytes, arguments or grants.
 *
 * A UI-associated tool's result is sealed as the model path seals one (seal PENDING → append → commit): the event
 * lists it in `sealedResultRefs` under a host-minted function-call id `va-<hex>` (with a bare function response of
 * that id, which the ledger requires of every reference), and the record names that id. An append that fails
 * leaves the record PENDING and referenced by nothing, so the sealed store's GC collects it; the append's error is
 * rethrown (the service decides what the View hears). A seal that fails does not lose the audit event: it is
 * appended without a reference (logged). Retention counts while the append runs and compacts after it
 * (`audit-retention.ts`).
 */
export class AppAudit implements AuditPort {
  private readonly retention: AuditRetention;

  constructor(
    private readonly bus: BusClient,
    private readonly sealed: SealedResultClient,
    store: CoordinationStore,
    private readonly logger: Logger,
    private readonly options: AppAuditOptions,
  ) {
    this.retention = new AuditRetention(bus, store, logger, options.timeoutMs);
  }

  async record(view: ViewContext, entry: AuditEntry): Promise<void> {
    const { session, incarnation } = view.view.record;
    const sealed = entry.seal ? await this.seal(view, entry.seal) : null;
    const record = recordOf(view, entry, sealed?.functionCallId ?? null);
    const event: LedgerEventInput = {
      author: APP_AUDIT_AUTHOR,
      customMetadata: { [APP_AUDIT_METADATA_KEY]: record },
      ...(sealed ? { functionResponses: [{ id: sealed.functionCallId, name: sealed.name }], sealedResultRefs: { [sealed.functionCallId]: sealed.ref } } : {}),
    };
    // The retention count (one coordination-store command) is taken while the append runs; it never rejects.
    const counted = this.retention.counted(view, sealed === null);
    let appended: ResponseOf<typeof LifecycleAppendEvents>;
    try {
      appended = await this.bus.request(
        LifecycleAppendEvents,
        { session, incarnation, provenance: { path: 'app-operation' }, events: [event] },
        { timeoutMs: this.options.timeoutMs },
      );
    } catch (error) {
      await counted;
      throw error;
    }
    if (sealed) await this.commit(view, sealed, appended.eventIds[0]);
    await this.retention.appended(view, await counted);
  }

  /** Seals the full result PENDING with its refresh record; null (logged) when it cannot be sealed. */
  private async seal(view: ViewContext, seal: NonNullable<AuditEntry['seal']>): Promise<Sealed | null> {
    const { viewId, session, incarnation, serverId, bindingRevision } = view.view.record;
    const functionCallId = `va-${randomBytes(16).toString('hex')}`;
    if (bindingRevision === null) {
      this.logger.warn({ viewId, tool: seal.tool.nativeName }, 'a View without a binding revision: its result is not sealed');
      return null;
    }
    const envelope: SealedEnvelope = {
      result: seal.result as SealedEnvelope['result'],
      refresh: {
        serverId: serverId ?? seal.tool.toolsetId,
        toolsetId: seal.tool.toolsetId,
        nativeToolName: seal.tool.nativeName,
        arguments: { kind: 'inline', value: seal.arguments },
        catalogGeneration: seal.tool.catalogGeneration,
        bindingRevision,
        replayClassification: view.profile.replayClassification,
        initiatingOrigin: 'app',
        correlation: { invocationId: viewId, functionCallId },
      },
    };
    try {
      // The tool has run: sealing is retried (same operation-instance id) while the deadline leaves room for the append.
      const { ref } = await retryWithinDeadline(
        () =>
          this.sealed.create({
            scope: { session, incarnation, functionCallId },
            operationInstanceId: `${viewId}.${functionCallId}`,
            envelope,
            ...(this.options.pendingTtlMs !== undefined ? { pendingTtlMs: this.options.pendingTtlMs } : {}),
          }),
        { reserveMs: APPEND_RESERVE_MS, fallbackBudgetMs: this.options.timeoutMs },
      );
      return { functionCallId, name: seal.tool.nativeName, ref: { recordId: ref.recordId, schemaVersion: ref.schemaVersion } };
    } catch (error) {
      this.logger.warn({ viewId, tool: seal.tool.nativeName, error: describeFailure(error) }, 'sealing a View result failed: audited without it');
      return null;
    }
  }

  /** Commits the reference to its event; a failure is repaired by the sealed store's recovery pass (it asks the ledger). */
  private async commit(view: ViewContext, sealed: Sealed, eventId: number): Promise<void> {
    const { viewId, session, incarnation } = view.view.record;
    try {
      await this.sealed.commit({ session, incarnation, eventId: String(eventId), functionCallId: sealed.functionCallId, recordId: sealed.ref.recordId });
    } catch (error) {
      this.logger.warn(
        { viewId, eventId, functionCallId: sealed.functionCallId, error: describeFailure(error) },
        'sealed reference commit failed after the append',
      );
    }
  }
}

/** Strings longer than the record allows are cut to fit: an audit event with a clipped name beats none. */
const clip = (value: string, max: number) => (value.length > max ? value.slice(0, max) : value);

/** The operation record, validated against its schema before it is offered to the ledger. */
function recordOf(view: ViewContext, entry: AuditEntry, functionCallId: string | null): AppAuditRecord {
  const { viewId, widget } = view.view.record;
  const parsed = appAuditRecordSchema.safeParse({
    kind: 'operation',
    viewId,
    widgetId: widget.widgetId,
    method: clip(entry.method, 128),
    tool: entry.tool === null ? null : clip(entry.tool, 256),
    uri: entry.uri === null ? null : clip(entry.uri, 2048),
    decision: entry.decision,
    outcome: entry.outcome,
    reason: entry.reason === null ? null : clip(entry.reason, 128),
    functionCallId,
    replayed: entry.replayed,
    durationMs: Math.max(0, Math.round(entry.durationMs)),
    at: new Date().toISOString(),
  });
  if (!parsed.success) throw new AppHostError('INTERNAL', `an app audit record of View ${viewId} is malformed: ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}
