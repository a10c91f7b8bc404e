import type { SessionKey } from '@apphost/contracts';
import type { LifecycleMetrics } from '../metrics';
import type { LifecycleRecord, LifecycleRepository } from './lifecycle.repository';

/**
 * Lazy migration: every entry point reads the record through here. A session row without a lifecycle record is
 * adopted as `ACTIVE(1)` with an adoption marker (a distinct receipt: never disguised as a fresh creation), by a
 * guarded claim of the legacy row in one transaction; a concurrent adopter loses the claim and just re-reads.
 */
export async function loadOrAdopt(repo: LifecycleRepository, metrics: LifecycleMetrics, key: SessionKey): Promise<LifecycleRecord | null> {
  const { record, legacy } = await repo.probe(key);
  if (record || !legacy) return record;
  const adopted = await repo.adoptLegacy(key);
  if (adopted) metrics.transitions.inc({ transition: 'adopt', outcome: 'ok' });
  return repo.load(key); // adopted by us or by a concurrent adopter; null when there was nothing to adopt
}
