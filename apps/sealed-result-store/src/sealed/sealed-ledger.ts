import { BusClient } from '@apphost/bus';
import { LifecycleWhichReferencesAreAppended, WHICH_REFERENCES_MAX } from '@apphost/contracts';
import type { AppendedRecord, PendingRecordKey } from './sealed-collector.repository';

/**
 * The authoritative ledger (lifecycle-store), as GC and the recovery pass ask it: which PENDING records a durable
 * event references. Any failure (no responder, timeout, error) propagates: callers must then act as if every
 * record were referenced, i.e. delete nothing.
 */
export class SealedLedger {
  constructor(
    private readonly bus: BusClient,
    private readonly timeoutMs: number,
  ) {}

  async appendedAmong(records: readonly PendingRecordKey[]): Promise<AppendedRecord[]> {
    const byId = new Map(records.map((r) => [r.recordId, r]));
    const appended: AppendedRecord[] = [];
    for (let start = 0; start < records.length; start += WHICH_REFERENCES_MAX) {
      const slice = records.slice(start, start + WHICH_REFERENCES_MAX);
      const reply = await this.bus.request(LifecycleWhichReferencesAreAppended, { references: slice }, { timeoutMs: this.timeoutMs });
      for (const hit of reply.appended) {
        const record = byId.get(hit.recordId);
        if (record) appended.push({ ...record, eventId: String(hit.eventId) });
      }
    }
    return appended;
  }
}
