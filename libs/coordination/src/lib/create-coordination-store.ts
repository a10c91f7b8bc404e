import type { CoordinationStore } from './coordination-store';
import { MemoryCoordinationStore } from './memory-coordination-store';
import { RedisCoordinationStore, type CoordinationLogger } from './redis-coordination-store';

export interface CreateCoordinationStoreOptions {
  /** Redis when given (an empty string is rejected, not read as "memory": misconfiguration fails loudly). */
  url?: string;
  keyPrefix: string;
  name: string;
  logger?: CoordinationLogger;
}

/** Redis in deployments; the in-memory store for the all-in-one development plane, which runs without Redis. */
export async function createCoordinationStore(options: CreateCoordinationStoreOptions): Promise<CoordinationStore> {
  const { url, keyPrefix, name, logger } = options;
  if (url === undefined) return new MemoryCoordinationStore({ keyPrefix, name });
  return RedisCoordinationStore.connect({ url, keyPrefix, name, logger });
}
