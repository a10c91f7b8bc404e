import type { BeforeApplicationShutdown, OnApplicationShutdown } from '@nestjs/common';
import type { SessionKey } from '@apphost/contracts';
import { ChannelWaiters, type ServiceDatabase } from '@apphost/persistence';
import { MESSAGE_CHANNEL } from './message.repository';

/** A waiter re-reads at least this often, whatever the notifications do (a lapsed claim changes no row). */
export const MESSAGE_RECHECK_MS = 1_000;

const keyOf = (k: Pick<SessionKey, 'tenant' | 'appName' | 'userId' | 'sessionId'>) => JSON.stringify([k.tenant, k.appName, k.userId, k.sessionId]);

/**
 * Wakes the long polls of `list-messages` when a message of their session changes. The change may commit on another
 * replica, so the wake-up travels as a PostgreSQL NOTIFY (sent by the changing statement itself, delivered at its
 * commit) that one LISTEN connection per process receives (`ChannelWaiters`). A notification can be lost, and a claim
 * lapses without any write, so correctness never rests on it: a waiter re-reads after `recheckMs` at the latest.
 */
export class MessageWaiter implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly waiters: ChannelWaiters;

  constructor(database: ServiceDatabase) {
    this.waiters = new ChannelWaiters(
      database,
      MESSAGE_CHANNEL,
      (payload) => {
        const [schema, tenant, appName, userId, sessionId] = JSON.parse(payload) as string[];
        return schema === database.schema ? keyOf({ tenant, appName, userId, sessionId }) : undefined;
      },
      MESSAGE_RECHECK_MS,
    );
  }

  /** The bounded re-check; a spec raises it to prove a wake-up came from a notification. */
  get recheckMs(): number {
    return this.waiters.recheckMs;
  }

  set recheckMs(ms: number) {
    this.waiters.recheckMs = ms;
  }

  /** Arms a wake-up for the session's next change; call it BEFORE reading (`ChannelWaiters.nextChange`). */
  nextChange(session: SessionKey, maxWaitMs: number): Promise<{ changed: Promise<void> }> {
    return this.waiters.nextChange(keyOf(session), maxWaitMs);
  }

  /** Wakes this process's waiters of the session at once (other replicas hear the statement's NOTIFY). */
  changed(session: SessionKey): void {
    this.waiters.wake(keyOf(session));
  }

  /** True once the service is stopping: long polls answer what they have instead of holding the drain. */
  get stopping(): boolean {
    return this.waiters.stopping;
  }

  /** Wakes every waiter as the service begins to stop, so its long polls answer now rather than at the grace's end. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.waiters.close();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.waiters.close();
  }
}
