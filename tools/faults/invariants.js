"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.readmeRound = readmeRound;
exports.codeOf = codeOf;
exports.checkInvariants = checkInvariants;
const contracts_1 = require("@apphost/contracts");
const testing_1 = require("@apphost/testing");
const UI_TOOL = testing_1.PUBLISHED_SERVERS.basicVanillaJs.uiTool;
const RECOVERY_BOUND_MS = 45_000;
/** A little over GOVERNED_SEAL_PENDING_TTL_MS: whatever a fault left PENDING is collectable by then. */
const PENDING_TTL_WAIT_MS = 1_200;
let round = 0;
/** One README round on a fresh session: open, catalog, a UI batch (sealed) and a recorded non-UI batch. */
async function readmeRound(plane) {
    const sessionId = `round-${++round}-${Date.now()}`;
    const opened = await plane.flow.openSession(sessionId);
    if (opened.status !== 201)
        throw new Error(`open session: ${opened.status} ${JSON.stringify(opened.body)}`);
    plane.sessions.add(sessionId);
    const catalog = await plane.flow.catalog(sessionId);
    const names = (catalog.body.tools ?? []).map((t) => t.name).sort();
    if (catalog.status !== 200 || !names.includes(UI_TOOL) || !names.includes('record'))
        throw new Error(`catalog: ${catalog.status} ${names.join(',')}`);
    const ui = await plane.flow.batch(sessionId, 'inv-ui', [{ functionCallId: 'call-1', tool: UI_TOOL, arguments: {} }]);
    if (ui.status !== 200)
        throw new Error(`UI batch: ${ui.status} ${JSON.stringify(ui.body)}`);
    const key = `${sessionId}/inv-rec/call-1`;
    const rec = await plane.flow.batch(sessionId, 'inv-rec', [{ functionCallId: 'call-1', tool: 'record', arguments: { key } }]);
    if (rec.status !== 200)
        throw new Error(`recorded batch: ${rec.status} ${JSON.stringify(rec.body)}`);
}
/** The code of a reply, or a description of why it is not a typed envelope. */
function codeOf(seen) {
    if (seen.status === 0)
        return { code: 'no reply', typed: false };
    if (seen.status < 300)
        return { code: String(seen.status), typed: true };
    const parsed = contracts_1.errorEnvelopeSchema.safeParse('body' in seen ? seen.body.error : undefined);
    if (!parsed.success)
        return { code: `untyped ${seen.status}`, typed: false };
    const typed = contracts_1.HTTP_STATUS_BY_CODE[parsed.data.code] === seen.status;
    return { code: parsed.data.code, typed };
}
/**
 * The invariants every fault must keep, checked after the fault ended (`faultEndedAt`) on the replies seen since
 * `before.seen`: no bystander died; every reply a typed envelope with an allowed code; no call executed twice; after a
 * forced GC every ledger event's sealed results still resolve; the plane serves a README round again within a bound.
 */
async function checkInvariants(plane, fault, before, faultEndedAt, expect) {
    const lost = [];
    let recoveredMs = null;
    await (0, testing_1.eventually)(async () => {
        await readmeRound(plane);
        return true;
    }, RECOVERY_BOUND_MS, 500).then(() => (recoveredMs = Date.now() - faultEndedAt), (error) => lost.push(`no README round within ${RECOVERY_BOUND_MS} ms: ${error.message.slice(0, 300)}`));
    if (!plane.launcherAlive())
        lost.push('the launcher died');
    for (const line of plane.unaskedExits())
        lost.push(`a service died unasked: ${line}`);
    for (const [name, info] of plane.services())
        if (!isAlive(info.pid))
            lost.push(`${name} (pid ${info.pid}) is not running`);
    const codes = new Set();
    for (const seen of plane.seen.slice(before.seen)) {
        const { code, typed } = codeOf(seen);
        if (seen.status >= 300 || seen.status === 0)
            codes.add(code);
        if (seen.status === 0 && expect.noReplyAllowed)
            continue;
        if (!typed)
            lost.push(`not a typed envelope: ${JSON.stringify(seen).slice(0, 200)}`);
        else if (seen.status >= 300 && !expect.allowedCodes.includes(code))
            lost.push(`unexpected code ${code}: ${JSON.stringify(seen).slice(0, 200)}`);
    }
    // Only calls this fault touched: a duplicate an earlier fault caused is that fault's row.
    for (const [key, count] of plane.executions())
        if (count > 1 && count > (before.executions.get(key) ?? 0))
            lost.push(`${key} executed ${count} times`);
    lost.push(...(await unresolvableAfterGc(plane)));
    // A loss an earlier fault caused (a broken session) belongs to that fault's row, not to every row after it.
    const fresh = [...new Set(lost)].filter((problem) => !plane.reportedLosses.has(problem));
    fresh.forEach((problem) => plane.reportedLosses.add(problem));
    return { fault, codes: [...codes].sort(), recoveredMs, lost: fresh };
}
async function unresolvableAfterGc(plane) {
    const problems = [];
    await (0, testing_1.sleep)(PENDING_TTL_WAIT_MS);
    await plane.bus.request(contracts_1.SealedGc, {}).catch((error) => problems.push(`GC failed: ${error.message}`));
    for (const sessionId of plane.sessions) {
        const page = await plane.flow.events(sessionId).catch(() => undefined);
        if (!page || page.status !== 200) {
            problems.push(`events of ${sessionId}: ${page?.status ?? 'no reply'}`);
            continue;
        }
        const { incarnation, userId } = page.body;
        for (const event of page.body.events) {
            for (const d of (0, testing_1.descriptors)(event)) {
                if (!d.sealedResultRef)
                    continue;
                const key = {
                    session: { tenant: 'dev', appName: 'demo', userId, sessionId },
                    incarnation,
                    eventId: String(event.id),
                    functionCallId: d.correlation.functionCallId,
                    recordId: d.sealedResultRef.recordId,
                };
                await plane.bus
                    .request(contracts_1.SealedResolve, { key })
                    .catch((error) => problems.push(`event ${sessionId}#${event.id} does not resolve: ${error.message}`));
            }
        }
    }
    return problems;
}
function isAlive(pid) {
    try {
        process.kill(pid, 0);
        return true;
    }
    catch {
        return false;
    }
}
//# sourceMappingURL=invariants.js.map