/**
 * governed-operations' crash points, provided as `FaultPoints<GovernedFaultPoint>` under `FAULT_POINTS` and armed
 * only by tests.
 * - `batch.before-append`: the batch's results are sealed PENDING, its one event not yet appended (GC collects them).
 */
export type GovernedFaultPoint = 'batch.before-append';
