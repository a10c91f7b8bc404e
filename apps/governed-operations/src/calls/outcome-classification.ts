import { AppHostError, GovernedReasons } from '@apphost/contracts';

/**
 * Whether any call of a batch (or decision) has started executing. Errors are classified by it: before, the
 * store's code stands as is (UNAVAILABLE: nothing ran, retry); after, the error says the tool ran. `persist`
 * records the start elsewhere first (a batch's claims): if it fails, `start()` rejects and no call runs.
 */
export class ExecutionMark {
  started = false;
  private persisted?: Promise<void>;

  constructor(private readonly persist: () => Promise<void> = () => Promise.resolve()) {}

  /** Called right before each call executes; the first call persists the start once for all. */
  async start(): Promise<void> {
    this.persisted ??= this.persist();
    await this.persisted;
    this.started = true;
  }
}

/** The error the caller gets for a failure after `mark` started: OUTCOME_UNKNOWN, `EXECUTED_NOT_RECORDED`. */
export function classifyFailure(error: unknown, mark: ExecutionMark): unknown {
  if (!mark.started) return error;
  const cause = error instanceof AppHostError ? error.code : 'INTERNAL';
  return new AppHostError('OUTCOME_UNKNOWN', `a tool ran but its event could not be recorded (${cause}); a retry with the same ids does not run it again`, {
    details: GovernedReasons.details('EXECUTED_NOT_RECORDED', { cause }),
  });
}
