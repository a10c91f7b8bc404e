"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const pg_1 = require("pg");
const contracts_1 = require("@apphost/contracts");
const sealed_results_1 = require("@apphost/sealed-results");
const testing_1 = require("@apphost/testing");
const services_1 = require("./services");
/**
 * Sealed-record GC and the recovery pass against the real ledger: lifecycle-store and sealed-result-store booted
 * from their definitions on the real NATS and PostgreSQL. Records are sealed, events appended with their
 * references, and the commit is left out (the lost reply): the ledger decides what GC may delete.
 */
function byName(name) {
    const definition = (0, services_1.loadServiceDefinitions)().find((d) => d.name === name);
    if (!definition)
        throw new Error(`no service definition named ${name}`);
    return definition;
}
const LIFECYCLE_ENV = { LIFECYCLE_CASCADE_PARTICIPANTS: 'sealed-result-store' };
// The timer runs GC and the recovery pass often, and the recovery pass asks about every PENDING record at once.
const SEALED_ENV = { SEALED_GC_INTERVAL_MS: '200', SEALED_RECOVER_AFTER_MS: '0', SEALED_LEDGER_TIMEOUT_MS: '1000' };
function envelopeFor(functionCallId) {
    return {
        result: { content: [{ type: 'text', text: 'ready' }], structuredContent: { rows: [1, 2] } },
        refresh: {
            serverId: 'srv',
            toolsetId: 'ts',
            nativeToolName: 'show',
            arguments: { kind: 'inline', value: {} },
            catalogGeneration: 'cat-1',
            bindingRevision: 'v1.rev',
            replayClassification: { source: 'profile', revision: '1' },
            initiatingOrigin: 'model',
            correlation: { invocationId: 'inv-gc', functionCallId },
        },
    };
}
describe('sealed-record GC asks the authoritative ledger', () => {
    const prefix = (0, testing_1.uniquePrefix)();
    let lifecycle;
    let sealed;
    let stopAll;
    /** A lifecycle-store booted again after a test stopped the first: bootServices' stop does not know it. */
    let restarted;
    let client;
    let pg;
    let sessions = 0;
    beforeAll(async () => {
        const booted = await (0, testing_1.bootServices)(prefix, {
            lifecycle: { definition: byName('lifecycle-store'), env: LIFECYCLE_ENV },
            sealed: { definition: byName('sealed-result-store'), env: SEALED_ENV },
        });
        ({ lifecycle, sealed } = booted.services);
        stopAll = booted.stop;
        client = new sealed_results_1.SealedResultClient(sealed.client, { timeoutMs: 10_000 });
        pg = new pg_1.Client({ connectionString: testing_1.TEST_DATABASE_URL });
        await pg.connect();
    }, 30_000);
    afterAll(async () => {
        await pg?.end();
        await restarted?.stop();
        await stopAll?.();
        await (0, testing_1.dropSchemasWithPrefix)(prefix);
    });
    const stateOf = async (recordId) => (await pg.query(`SELECT state, event_id FROM "${prefix}sealed_result_store".sealed_records WHERE record_id = $1`, [recordId])).rows[0];
    async function newSession() {
        const session = { tenant: 'acme', appName: 'gc-app', userId: 'alice', sessionId: `gc-${++sessions}` };
        await lifecycle.client.request(contracts_1.LifecycleCreateSession, { session, creationOperationId: `create-${session.sessionId}` });
        return session;
    }
    const seal = (scope, pendingTtlMs) => client.create({ scope, operationInstanceId: `op-${scope.functionCallId}`, envelope: envelopeFor(scope.functionCallId), pendingTtlMs });
    /** Appends one event referencing `widget` by descriptor and `interactive` by the event-level map; no commit follows. */
    async function appendReferencing(session, widget, interactive) {
        const event = {
            author: 'agent',
            functionResponses: [widget, ...(interactive ? [interactive] : [])].map((r) => ({ id: r.fc, name: 'show', response: { content: [] } })),
            widgets: [
                {
                    schemaVersion: 1,
                    resourceUri: 'ui://gc/app.html',
                    correlation: { functionCallId: widget.fc },
                    serverId: 'srv',
                    toolsetId: 'ts',
                    bindingRevision: 'v1.rev',
                    sealedResultRef: { recordId: widget.recordId, schemaVersion: 1 },
                },
            ],
            ...(interactive ? { sealedResultRefs: { [interactive.fc]: { recordId: interactive.recordId, schemaVersion: 1 } } } : {}),
        };
        const appended = await lifecycle.client.request(contracts_1.LifecycleAppendEvents, { session, incarnation: 1, provenance: { path: 'user-turn' }, events: [event] });
        return String(appended.eventIds[0]);
    }
    it('expired records an appended event references are committed to it, in both placements; the orphan is deleted', async () => {
        const session = await newSession();
        const [w, i, o] = ['fc-w', 'fc-i', 'fc-o'].map((fc) => ({ session, incarnation: 1, functionCallId: `${session.sessionId}-${fc}` }));
        const widget = await seal(w, 0);
        const interactive = await seal(i, 0);
        const orphan = await seal(o, 0);
        const eventId = await appendReferencing(session, { fc: w.functionCallId, recordId: widget.ref.recordId }, { fc: i.functionCallId, recordId: interactive.ref.recordId });
        // Whichever pass gets there first — the timer's or this one — the outcome is the same.
        await sealed.client.request(contracts_1.SealedGc, {});
        expect(await stateOf(widget.ref.recordId)).toEqual({ state: 'COMMITTED', event_id: eventId });
        expect(await stateOf(interactive.ref.recordId)).toEqual({ state: 'COMMITTED', event_id: eventId });
        expect(await stateOf(orphan.ref.recordId)).toBeUndefined();
        expect((await client.resolve({ ...w, eventId, recordId: widget.ref.recordId })).envelope).toEqual(envelopeFor(w.functionCallId));
        await (0, testing_1.expectAppError)(sealed.client.request(contracts_1.SealedCommit, { key: { ...o, eventId, recordId: orphan.ref.recordId } }), 'NOT_FOUND');
    });
    it('the recovery pass commits the references of an appended event long before the records expire', async () => {
        const session = await newSession();
        const scope = { session, incarnation: 1, functionCallId: `${session.sessionId}-fc` };
        const created = await seal(scope, 600_000);
        const eventId = await appendReferencing(session, { fc: scope.functionCallId, recordId: created.ref.recordId });
        await (0, testing_1.eventually)(async () => (await stateOf(created.ref.recordId))?.state === 'COMMITTED', 5_000);
        expect(await stateOf(created.ref.recordId)).toEqual({ state: 'COMMITTED', event_id: eventId });
    });
    it('the ledger is down: GC answers UNAVAILABLE and deletes nothing; once it is back, only the orphan goes', async () => {
        const session = await newSession();
        const referenced = { session, incarnation: 1, functionCallId: `${session.sessionId}-ref` };
        const orphanScope = { session, incarnation: 1, functionCallId: `${session.sessionId}-orphan` };
        await lifecycle.stop();
        let kept;
        let orphan;
        try {
            kept = await seal(referenced, 0);
            orphan = await seal(orphanScope, 0);
            await (0, testing_1.expectAppError)(sealed.client.request(contracts_1.SealedGc, {}, { timeoutMs: 10_000 }), 'UNAVAILABLE', 'LEDGER_UNAVAILABLE');
            await new Promise((r) => setTimeout(r, 600)); // several timer passes fail closed too
            expect((await stateOf(kept.ref.recordId))?.state).toBe('PENDING');
            expect((await stateOf(orphan.ref.recordId))?.state).toBe('PENDING');
        }
        finally {
            lifecycle = restarted = await (0, testing_1.bootService)(byName('lifecycle-store'), prefix, LIFECYCLE_ENV);
        }
        const eventId = await appendReferencing(session, { fc: referenced.functionCallId, recordId: kept.ref.recordId });
        await sealed.client.request(contracts_1.SealedGc, {});
        expect(await stateOf(kept.ref.recordId)).toEqual({ state: 'COMMITTED', event_id: eventId });
        expect(await stateOf(orphan.ref.recordId)).toBeUndefined();
    }, 30_000);
    it('a deleted session: its records go with the cascade, referenced or not, and GC does not bring anything back', async () => {
        const session = await newSession();
        const scope = { session, incarnation: 1, functionCallId: `${session.sessionId}-fc` };
        const created = await seal(scope, 600_000);
        await appendReferencing(session, { fc: scope.functionCallId, recordId: created.ref.recordId });
        const deleted = await lifecycle.client.request(contracts_1.LifecycleDeleteSession, { session }, { timeoutMs: 10_000 });
        expect(deleted.state).toBe('DELETED');
        expect(await stateOf(created.ref.recordId)).toBeUndefined();
        await sealed.client.request(contracts_1.SealedGc, {});
        expect(await stateOf(created.ref.recordId)).toBeUndefined();
    });
});
//# sourceMappingURL=ledger-gc.e2e.spec.js.map