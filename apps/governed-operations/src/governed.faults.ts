/**
 * governed-operations' crash points, provided as `FaultPoints<GovernedFaultPoint>` under `FAULT_POINTS` and armed
 * only by tests.
 * - `batch.before-append`: the batch's results are sealed PENDING, its one event not yet appended (GC collects them).
 * - `batch.before-commit`: the event is appended and the batch answered; this sealed reference is not committed yet
 *   (the sealed store's recovery pass, GC or a `resolve` naming the event commits it).
 * - `message.after-record`: a `ui/message` is `RECORDED`, not yet re-checked nor accepted (it expires, never delivered).
 * - `message.before-accept`: the message is `RECORDED` and re-checked, the accept not yet asked for.
 * - `message.after-accept`: the message is `ACCEPTED` (the conversation's), the View not yet answered `{}`.
 */
export type GovernedFaultPoint = 'batch.before-append' | 'batch.before-commit' | 'message.after-record' | 'message.before-accept' | 'message.after-accept';
