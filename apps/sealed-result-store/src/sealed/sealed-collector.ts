import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import { AppHostError, SealedReasons } from '@apphost/contracts';
import { FAULT_POINTS, SERVICE_CONTEXT, type FaultPoints, type ServiceContext } from '@apphost/runtime';
import { SealedCollectorRepository, type AppendedRecord, type PendingRecordKey } from './sealed-collector.repository';
import { SealedLedger } from './sealed-ledger';
import type { SealedConfig } from './sealed.config';
import type { SealedFaultPoint } from './sealed.faults';
import type { SealedStore } from './sealed-store';
import { SEALED_CONFIG, SEALED_STORE } from './sealed.tokens';

export interface GcResult {
  deletedRecords: number;
  committedRecords: number;
  deletedUploads: number;
}

/**
 * GC and the recovery pass: both ask the authoritative ledger (lifecycle-store) before they touch a PENDING record.
 * A record an event references is committed to that event, never deleted (the append's reply or the commit was
 * lost); GC deletes only expired records the ledger does not reference, or whose incarnation is fenced; when the
 * ledger cannot answer, GC deletes nothing of that batch. The recovery pass commits referenced records well before
 * they expire. One timer runs both.
 */
@Injectable()
export class SealedCollector implements OnModuleInit, OnModuleDestroy {
  private readonly repository: SealedCollectorRepository;
  private readonly ledger: SealedLedger;
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    @Inject(SEALED_STORE) store: SealedStore,
    @Inject(SEALED_CONFIG) private readonly config: SealedConfig,
    @Inject(FAULT_POINTS) private readonly faults: FaultPoints<SealedFaultPoint>,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
    @Inject(BusClient) bus: BusClient,
  ) {
    this.repository = new SealedCollectorRepository(store.database);
    this.ledger = new SealedLedger(bus, config.ledgerTimeoutMs);
  }

  onModuleInit(): void {
    if (this.config.gcIntervalMs > 0) {
      this.timer = setInterval(() => void this.tick(), this.config.gcIntervalMs);
      this.timer.unref();
    }
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** One GC pass over at most `limit` expired records (and expired uploads). UNAVAILABLE when the ledger cannot answer. */
  async gc(limit = this.config.gcBatch): Promise<GcResult> {
    const deletedUploads = await this.repository.collectExpiredUploads(limit);
    const candidates = await this.repository.expiredPending(limit);
    const appended = await this.askLedger('gc', candidates);
    const committedRecords = await this.repository.commitToEvents(appended);
    await this.faults.hit('gc.before-delete');
    const deletedRecords = await this.repository.deleteUnreferenced(
      candidates,
      appended.map((a) => a.recordId),
    );
    if (deletedRecords || committedRecords || deletedUploads) this.context.logger.info({ deletedRecords, committedRecords, deletedUploads }, 'sealed store GC');
    return { deletedRecords, committedRecords, deletedUploads };
  }

  /** One recovery pass: commits PENDING records older than `recoverAfterMs` that an appended event references. */
  async recover(limit = this.config.gcBatch): Promise<{ committedRecords: number }> {
    const candidates = await this.repository.uncheckedPending(this.config.recoverAfterMs, limit);
    const appended = await this.askLedger('recover', candidates);
    const committedRecords = await this.repository.commitToEvents(appended);
    const referenced = new Set(appended.map((a) => a.recordId));
    await this.repository.markChecked(candidates.filter((c) => !referenced.has(c.recordId)));
    if (committedRecords) this.context.logger.info({ committedRecords }, 'sealed store recovery: committed references of appended events');
    return { committedRecords };
  }

  private async askLedger(pass: 'gc' | 'recover', candidates: readonly PendingRecordKey[]): Promise<AppendedRecord[]> {
    if (candidates.length === 0) return [];
    try {
      return await this.ledger.appendedAmong(candidates);
    } catch (error) {
      const cause = error instanceof AppHostError ? error.code : 'INTERNAL';
      this.context.logger.warn({ err: error, pass, records: candidates.length }, 'the ledger did not answer: no sealed record of this batch is touched');
      throw new AppHostError('UNAVAILABLE', `the ledger could not say which records are referenced (${cause}); nothing was deleted`, {
        retryable: true,
        details: SealedReasons.details('LEDGER_UNAVAILABLE', { cause }),
      });
    }
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.recover();
      await this.gc();
    } catch (err) {
      this.context.logger.warn({ err }, 'sealed store GC/recovery pass failed; the next one retries');
    } finally {
      this.running = false;
    }
  }
}
