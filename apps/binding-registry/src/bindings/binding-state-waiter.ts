import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Queryable } from '@apphost/persistence';
import type { Client, Notification } from 'pg';
import { RegistryStoreAccess } from '../store/store-access';

/** The one channel every replica listens on; payloads carry the schema, so planes sharing a database stay apart. */
const CHANNEL = 'apphost_binding_state';
/** A waiter re-reads the state at least this often, whatever the notifications do. */
export const FALLBACK_RECHECK_MS = 1_000;
/** Pause before re-opening a dropped LISTEN connection, so a server that refuses is not hammered. */
const RELISTEN_DELAY_MS = 100;

/** Tells every replica on the database that `toolsetId#generation` of the registry in `schema` changed state. */
export async function notifyBindingState(db: Queryable, schema: string, toolsetId: string, generation: number): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify([schema, toolsetId, generation])]);
}

/**
 * Wakes whoever waits for a binding generation to leave MATERIALIZING. The construction may run on another replica
 * (the `beginMaterialize` CAS in PostgreSQL decides who builds, across replicas), so the wake-up travels as a
 * PostgreSQL NOTIFY that every replica LISTENs for; a change made in this process also wakes its own waiters at
 * once. A notification can be lost (the changer died between its update and its notify, or the listening connection
 * dropped), so correctness never rests on it: a waiter re-reads at the latest after `FALLBACK_RECHECK_MS`.
 */
@Injectable()
export class BindingStateWaiter implements OnApplicationShutdown {
  private readonly waiters = new Map<string, Set<() => void>>();
  private listener?: Promise<Client | undefined>;
  private relistenTimer?: NodeJS.Timeout;
  private closed = false;
  /** The bounded re-check; tests raise it to prove a wake-up came from a notification. */
  recheckMs = FALLBACK_RECHECK_MS;

  constructor(private readonly store: RegistryStoreAccess) {}

  /**
   * Arms a wake-up for the next change of `toolsetId#generation`; call it BEFORE reading the state, then await the
   * returned `changed` if the state read is not final. It resolves on a change, or after `maxWaitMs` (at most the
   * re-check interval). Wrapped in an object: an async function returning a bare promise would wait for it.
   */
  async nextChange(toolsetId: string, generation: number, maxWaitMs: number): Promise<{ changed: Promise<void> }> {
    await this.listen();
    const key = keyOf(toolsetId, generation);
    let wake!: () => void;
    const changed = new Promise<void>((resolve) => (wake = resolve));
    const timer = setTimeout(wake, Math.max(0, Math.min(maxWaitMs, this.recheckMs)));
    const set = this.waiters.get(key) ?? new Set();
    this.waiters.set(key, set.add(wake));
    return {
      changed: changed.finally(() => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.waiters.get(key) === set) this.waiters.delete(key);
      }),
    };
  }

  /** Announces that `toolsetId#generation` changed state: local waiters now, other replicas through NOTIFY. */
  async changed(toolsetId: string, generation: number): Promise<void> {
    this.wake(keyOf(toolsetId, generation));
    try {
      await notifyBindingState(this.store.store.database, this.store.store.schema, toolsetId, generation);
    } catch {
      // Other replicas' waiters fall back to their re-check.
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.relistenTimer);
    const client = await this.listener?.catch(() => undefined);
    this.listener = undefined;
    await client?.end().catch(() => undefined);
  }

  private wake(key: string): void {
    for (const wake of this.waiters.get(key) ?? []) wake();
  }

  /**
   * One LISTEN connection per process, opened at the first wait. If it fails or drops (a terminated backend, a
   * failover), it is opened again at once while anyone waits, else at the next wait; meanwhile waiters re-check.
   */
  private async listen(): Promise<void> {
    if (this.closed) return;
    this.listener ??= this.connect();
    await this.listener;
  }

  private async connect(): Promise<Client | undefined> {
    // The library's dedicated client already logs its 'error'; a drop must not take the process with it.
    const client = this.store.store.database.dedicatedConnection('listen');
    let dropped = false;
    let listening = false;
    const drop = () => {
      if (dropped) return;
      dropped = true;
      this.listener = undefined;
      void client.end().catch(() => undefined);
      // Only a connection that was LISTENing is reopened at once: a failed attempt waits for the next wait, so a
      // server that refuses is not retried in a loop.
      if (listening && !this.closed && this.waiters.size > 0) this.relisten();
    };
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', (n: Notification) => this.onNotification(n));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      listening = !dropped;
      return listening ? client : undefined;
    } catch {
      drop();
      return undefined;
    }
  }

  /** One reconnect attempt after a short pause; if it fails too, the next wait tries again. */
  private relisten(): void {
    if (this.relistenTimer) return;
    this.relistenTimer = setTimeout(() => {
      this.relistenTimer = undefined;
      void this.listen();
    }, RELISTEN_DELAY_MS);
    this.relistenTimer.unref();
  }

  private onNotification(n: Notification): void {
    if (n.channel !== CHANNEL || !n.payload) return;
    try {
      const [schema, toolsetId, generation] = JSON.parse(n.payload) as [string, string, number];
      if (schema === this.store.store.schema) this.wake(keyOf(toolsetId, generation));
    } catch {
      // Not ours.
    }
  }
}

function keyOf(toolsetId: string, generation: number): string {
  return `${toolsetId}#${generation}`;
}
