/**
 * governed-operations' crash points, provided as `FaultPoints<GovernedFaultPoint>` under `FAULT_POINTS` and armed
 * only by tests.
 * - `batch.before-append`: the batch's results are sealed PENDING, its one event not yet appended (GC collects them).
 * - `message.after-record`: a `ui/message` is `RECORDED`, not yet re-checked nor accepted (it expires, never delivered).
 * - `message.after-accept`: the message is `ACCEPTED` (the conversation's), the View not yet answered `{}`.
 */
export type GovernedFaultPoint = 'batch.before-append' | 'message.after-record' | 'message.after-accept';
