import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { ChannelWaiters, type Queryable } from '@apphost/persistence';
import { RegistryStoreAccess } from '../store/store-access';

/** The one channel every replica listens on; payloads carry the schema, so planes sharing a database stay apart. */
const CHANNEL = 'apphost_binding_state';
/** A waiter re-reads the state at least this often, whatever the notifications do. */
export const FALLBACK_RECHECK_MS = 1_000;

/** Tells every replica on the database that `toolsetId#generation` of the registry in `schema` changed state. */
export async function notifyBindingState(db: Queryable, schema: string, toolsetId: string, generation: number): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify([schema, toolsetId, generation])]);
}

/**
 * Wakes whoever waits for a binding generation to leave MATERIALIZING. The construction may run on another replica
 * (the `beginMaterialize` CAS in PostgreSQL decides who builds, across replicas), so the wake-up travels as a
 * PostgreSQL NOTIFY that every replica LISTENs for (`ChannelWaiters`: one connection per process, re-opened when it
 * drops); a change made in this process also wakes its own waiters at once. A notification can be lost (the changer
 * died between its update and its notify, or the listening connection dropped), so correctness never rests on it: a
 * waiter re-reads at the latest after `FALLBACK_RECHECK_MS`.
 */
@Injectable()
export class BindingStateWaiter implements OnApplicationShutdown {
  private readonly waiters: ChannelWaiters;

  constructor(private readonly store: RegistryStoreAccess) {
    this.waiters = new ChannelWaiters(
      store.store.database,
      CHANNEL,
      (payload) => {
        const [schema, toolsetId, generation] = JSON.parse(payload) as [string, string, number];
        return schema === store.store.schema ? keyOf(toolsetId, generation) : undefined;
      },
      FALLBACK_RECHECK_MS,
    );
  }

  /** The bounded re-check; tests raise it to prove a wake-up came from a notification. */
  get recheckMs(): number {
    return this.waiters.recheckMs;
  }

  set recheckMs(ms: number) {
    this.waiters.recheckMs = ms;
  }

  /**
   * Arms a wake-up for the next change of `toolsetId#generation`; call it BEFORE reading the state, then await the
   * returned `changed` if the state read is not final (`ChannelWaiters.nextChange`).
   */
  nextChange(toolsetId: string, generation: number, maxWaitMs: number): Promise<{ changed: Promise<void> }> {
    return this.waiters.nextChange(keyOf(toolsetId, generation), maxWaitMs);
  }

  /** Announces that `toolsetId#generation` changed state: local waiters now, other replicas through NOTIFY. */
  async changed(toolsetId: string, generation: number): Promise<void> {
    this.waiters.wake(keyOf(toolsetId, generation));
    try {
      await notifyBindingState(this.store.store.database, this.store.store.schema, toolsetId, generation);
    } catch {
      // Other replicas' waiters fall back to their re-check.
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.waiters.close();
  }
}

function keyOf(toolsetId: string, generation: number): string {
  return `${toolsetId}#${generation}`;
}
