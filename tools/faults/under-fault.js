"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.FAULT_CODES = void 0;
exports.underFault = underFault;
const invariants_1 = require("./invariants");
/** Codes an infrastructure fault may produce: typed, and either retry-safe or honest that the outcome is unknown. */
exports.FAULT_CODES = ['UNAVAILABLE', 'DEADLINE_EXCEEDED', 'OUTCOME_UNKNOWN'];
/** Runs `fault` (which ends when the fault is over), then checks every invariant and keeps the outcome for the table. */
async function underFault(plane, rows, fault, expectations, action) {
    const before = { seen: plane.seen.length, executions: plane.executions() };
    await action();
    const outcome = await (0, invariants_1.checkInvariants)(plane, fault, before, Date.now(), expectations);
    rows.push(outcome);
    return outcome;
}
//# sourceMappingURL=under-fault.js.map