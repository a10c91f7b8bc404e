import type { BeforeApplicationShutdown, OnApplicationShutdown } from '@nestjs/common';
import type { SessionKey } from '@apphost/contracts';
import type { ServiceDatabase } from '@apphost/persistence';
import type { Client, Notification } from 'pg';
import { MESSAGE_CHANNEL } from './message.repository';

/** A waiter re-reads at least this often, whatever the notifications do (a lapsed claim changes no row). */
export const MESSAGE_RECHECK_MS = 1_000;

const keyOf = (k: Pick<SessionKey, 'tenant' | 'appName' | 'userId' | 'sessionId'>) => JSON.stringify([k.tenant, k.appName, k.userId, k.sessionId]);

/**
 * Wakes the long polls of `list-messages` when a message of their session changes. The change may commit on another
 * replica, so the wake-up travels as a PostgreSQL NOTIFY (sent by the changing statement itself, delivered at its
 * commit) that one LISTEN connection per process receives. A notification can be lost (the connection dropped), and
 * a claim lapses without any write, so correctness never rests on it: a waiter re-reads after `recheckMs` at the latest.
 */
export class MessageWaiter implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly waiters = new Map<string, Set<() => void>>();
  private listener?: Promise<Client | undefined>;
  private closed = false;
  /** The bounded re-check; a spec raises it to prove a wake-up came from a notification. */
  recheckMs = MESSAGE_RECHECK_MS;

  constructor(private readonly database: ServiceDatabase) {}

  /**
   * Arms a wake-up for the session's next change; call it BEFORE reading, then await `changed` if the read found
   * nothing. It resolves on a change or after `maxWaitMs` (at most the re-check interval). Wrapped in an object: an
   * async function returning a bare promise would wait for it.
   */
  async nextChange(session: SessionKey, maxWaitMs: number): Promise<{ changed: Promise<void> }> {
    await this.listen();
    const key = keyOf(session);
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

  /** Wakes this process's waiters of the session at once (other replicas hear the statement's NOTIFY). */
  changed(session: SessionKey): void {
    for (const wake of this.waiters.get(keyOf(session)) ?? []) wake();
  }

  /** True once the service is stopping: long polls answer what they have instead of holding the drain. */
  get stopping(): boolean {
    return this.closed;
  }

  /** Wakes every waiter as the service begins to stop, so its long polls answer now rather than at the grace's end. */
  beforeApplicationShutdown(): void {
    this.closed = true;
    for (const set of this.waiters.values()) for (const wake of set) wake();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    const client = await this.listener?.catch(() => undefined);
    this.listener = undefined;
    await client?.end().catch(() => undefined);
  }

  /** One LISTEN connection per process, opened at the first wait and again at the next wait after it dropped. */
  private async listen(): Promise<void> {
    if (this.closed) return;
    this.listener ??= this.connect();
    await this.listener;
  }

  private async connect(): Promise<Client | undefined> {
    const client = this.database.dedicatedConnection('listen-messages');
    let dropped = false;
    const drop = () => {
      if (dropped) return;
      dropped = true;
      this.listener = undefined;
      void client.end().catch(() => undefined);
    };
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', (n: Notification) => this.onNotification(n));
    try {
      await client.connect();
      await client.query(`LISTEN ${MESSAGE_CHANNEL}`);
      return dropped ? undefined : client;
    } catch {
      // Waiters fall back to their re-check; the next wait tries again.
      drop();
      return undefined;
    }
  }

  private onNotification(n: Notification): void {
    if (n.channel !== MESSAGE_CHANNEL || !n.payload) return;
    try {
      const [schema, tenant, appName, userId, sessionId] = JSON.parse(n.payload) as string[];
      if (schema === this.database.schema) this.changed({ tenant, appName, userId, sessionId });
    } catch {
      // Not ours.
    }
  }
}
