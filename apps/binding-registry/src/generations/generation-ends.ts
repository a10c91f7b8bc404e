import type { Logger } from '@apphost/runtime';
import type { GenerationsRepository } from '../store/generations.repository';

type EndState = 'CLOSED' | 'GONE';
const RETRY_MS = 500;

/**
 * Records the end of a generation in the directory, durably: an end PostgreSQL did not take (an outage) is kept
 * and retried until it is recorded, so a row never stays LIVE for a generation its owner no longer holds. Each
 * statement is guarded by id and fence, so a retry can never end a newer claim.
 */
export class GenerationEnds {
  private readonly pending = new Map<string, { fence: number; state: EndState; reason: string }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: GenerationsRepository,
    private readonly logger: Logger,
  ) {}

  /** Throws when the end could not be recorded now (it is retried in the background). */
  async end(generationId: string, fence: number, state: EndState, reason: string): Promise<boolean> {
    try {
      return await this.repository.end(generationId, fence, state, reason);
    } catch (error) {
      this.pending.set(generationId, { fence, state, reason });
      this.scheduleRetry();
      throw error;
    }
  }

  get unrecorded(): number {
    return this.pending.size;
  }

  /** One pass over the unrecorded ends; what still fails stays for the next pass. */
  async retry(): Promise<void> {
    for (const [generationId, { fence, state, reason }] of [...this.pending]) {
      try {
        await this.repository.end(generationId, fence, state, reason);
        this.pending.delete(generationId);
      } catch {
        return; // PostgreSQL is still away: the rest waits for the next pass
      }
    }
    if (this.pending.size === 0) this.logger.info('every ended generation is recorded');
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private scheduleRetry(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.retry().finally(() => {
        if (this.pending.size > 0) this.scheduleRetry();
      });
    }, RETRY_MS);
    this.timer.unref();
  }
}
