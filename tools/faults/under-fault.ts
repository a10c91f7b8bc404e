import { checkInvariants, type FaultExpectations, type FaultOutcome } from './invariants';
import type { FaultPlane } from './fault-plane';

/** Codes an infrastructure fault may produce: typed, and either retry-safe or honest that the outcome is unknown. */
export const FAULT_CODES = ['UNAVAILABLE', 'DEADLINE_EXCEEDED', 'OUTCOME_UNKNOWN'] as const;

/** Runs `fault` (which ends when the fault is over), then checks every invariant and keeps the outcome for the table. */
export async function underFault(
  plane: FaultPlane,
  rows: FaultOutcome[],
  fault: string,
  expectations: FaultExpectations,
  action: () => Promise<void>,
): Promise<FaultOutcome> {
  const before = { seen: plane.seen.length, executions: plane.executions() };
  await action();
  const outcome = await checkInvariants(plane, fault, before, Date.now(), expectations);
  rows.push(outcome);
  return outcome;
}
