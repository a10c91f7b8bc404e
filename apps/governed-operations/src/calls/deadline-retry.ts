import { setTimeout as sleep } from 'node:timers/promises';
import { RequestContexts } from '@apphost/bus';
import { AppHostError } from '@apphost/contracts';

/** Codes after which the same request (same operation key) may be sent again. */
const RETRYABLE = new Set(['UNAVAILABLE', 'OUTCOME_UNKNOWN', 'DEADLINE_EXCEEDED', 'RESOURCE_EXHAUSTED']);
const FIRST_BACKOFF_MS = 50;
const MAX_BACKOFF_MS = 1_000;

/**
 * Retries `attempt` with bounded exponential backoff while the current request's deadline leaves more than
 * `reserveMs` after the pause (the steps that must still follow); without a request deadline, for at most
 * `fallbackBudgetMs`. `attempt` must be idempotent (the sealed create is: same operation-instance id).
 */
export async function retryWithinDeadline<T>(attempt: () => Promise<T>, budget: { reserveMs: number; fallbackBudgetMs: number }): Promise<T> {
  const fallbackEnd = Date.now() + budget.fallbackBudgetMs;
  for (let backoff = FIRST_BACKOFF_MS; ; backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)) {
    try {
      return await attempt();
    } catch (error) {
      const remaining = RequestContexts.remainingMs() ?? fallbackEnd - Date.now();
      const retryable = error instanceof AppHostError && RETRYABLE.has(error.code);
      if (!retryable || remaining - budget.reserveMs <= backoff) throw error;
      await sleep(backoff);
    }
  }
}
