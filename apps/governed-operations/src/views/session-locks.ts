import { randomUUID } from 'node:crypto';
import type { CoordinationStore } from '@apphost/coordination';
import type { SessionKey } from '@apphost/contracts';
import { sessionLockKeyOf } from './view-keys';

/**
 * The short per-session lock under which phase 2 of a teardown runs (`view-lock:<sessionDigest>`), so the
 * session's View state changes one teardown at a time across replicas. Held at most `holdMs` (a crashed holder
 * cannot block the session longer); a caller that cannot take it in `waitMs` gets null and leaves the work to a retry.
 */
export class SessionLocks {
  constructor(
    private readonly store: CoordinationStore,
    private readonly holdMs = 5_000,
    private readonly waitMs = 2_000,
  ) {}

  async withLock<T>(session: SessionKey, fn: () => Promise<T>): Promise<{ done: T } | null> {
    const key = sessionLockKeyOf(session);
    const token = randomUUID();
    const until = Date.now() + this.waitMs;
    while (!(await this.store.setIfAbsent(key, token, this.holdMs))) {
      if (Date.now() >= until) return null;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    try {
      return { done: await fn() };
    } finally {
      await this.store.compareAndDelete(key, token).catch(() => undefined);
    }
  }
}
