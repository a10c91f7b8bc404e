import { BusClient } from '@apphost/bus';
import { AppHostError, SealedResultStoreDescribe } from '@apphost/contracts';

/**
 * Admission of the stores the calls will need, before anything runs: the sealed-result store must answer
 * `describe` with every store ready. Its own error (UNAVAILABLE: no responder) passes through as is.
 */
export async function requireSealedStore(bus: BusClient, timeoutMs: number): Promise<void> {
  const report = await bus.request(SealedResultStoreDescribe, {}, { timeoutMs });
  const down = report.stores.filter((s) => !s.ready).map((s) => s.name);
  if (down.length > 0) throw new AppHostError('UNAVAILABLE', `the sealed-result store is not ready (${down.join(', ')}); nothing ran`);
}
