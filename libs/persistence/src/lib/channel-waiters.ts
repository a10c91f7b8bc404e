import { ChannelListener } from './channel-listener';
import type { ServiceDatabase } from './service-database';

/**
 * Keyed wake-ups driven by one PostgreSQL channel: a long wait (a poll for new messages, a construction finishing on
 * another replica) arms a wake-up for its key, then reads; a change made on any replica NOTIFYs the channel, and the
 * one LISTEN connection of the process (`ChannelListener`, re-opened when it drops) wakes the key's waiters. A
 * notification can be lost (the connection dropped, the changer died before its NOTIFY), so correctness never rests
 * on it: every wait ends after `recheckMs` at the latest and the waiter reads again.
 */
export class ChannelWaiters {
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly listener: ChannelListener;
  private started?: Promise<void>;
  private closed = false;

  /**
   * `keyOfPayload` names the key a notification wakes (undefined: not this store's, e.g. another schema's), and
   * `recheckMs` bounds every wait (a spec raises it to prove a wake-up came from a notification).
   */
  constructor(
    database: Pick<ServiceDatabase, 'dedicatedConnection'>,
    channel: string,
    private readonly keyOfPayload: (payload: string) => string | undefined,
    public recheckMs: number,
  ) {
    this.listener = new ChannelListener(
      database,
      channel,
      (payload) => this.onNotification(payload),
      () => undefined,
    );
  }

  /**
   * Arms a wake-up for the key's next change; call it BEFORE reading, then await `changed` if the read found nothing
   * final. It resolves on a change or after `maxWaitMs` (at most `recheckMs`). Wrapped in an object: an async
   * function returning a bare promise would wait for it. The first wait opens the LISTEN connection and waits for it,
   * so a change committed after the caller's read is heard.
   */
  async nextChange(key: string, maxWaitMs: number): Promise<{ changed: Promise<void> }> {
    if (!this.closed) await (this.started ??= this.listener.start());
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

  /** Wakes this process's waiters of `key` at once (other replicas hear the change's NOTIFY). */
  wake(key: string): void {
    for (const wake of this.waiters.get(key) ?? []) wake();
  }

  /** Wakes every waiter, e.g. as the service begins to stop, so long waits answer now. */
  wakeAll(): void {
    for (const set of this.waiters.values()) for (const wake of set) wake();
  }

  /** True once `close` ran. */
  get stopping(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeAll();
    await this.listener.close();
  }

  private onNotification(payload: string): void {
    let key: string | undefined;
    try {
      key = this.keyOfPayload(payload);
    } catch {
      return; // not ours
    }
    if (key !== undefined) this.wake(key);
  }
}
