import { Client } from 'pg';
import {
  LifecycleAppendEvents,
  LifecycleCreateSession,
  LifecycleDeleteSession,
  SealedCommit,
  SealedGc,
  type LedgerEventInput,
  type SealedCreateScope,
  type SealedEnvelope,
  type SessionKey,
} from '@apphost/contracts';
import { SealedResultClient } from '@apphost/sealed-results';
import {
  bootService,
  bootServices,
  dropSchemasWithPrefix,
  eventually,
  expectAppError,
  TEST_DATABASE_URL,
  uniquePrefix,
  type ServiceUnderTest,
} from '@apphost/testing';
import { loadServiceDefinitions } from './services';

/**
 * Sealed-record GC and the recovery pass against the real ledger: lifecycle-store and sealed-result-store booted
 * from their definitions on the real NATS and PostgreSQL. Records are sealed, events appended with their
 * references, and the commit is left out (the lost reply): the ledger decides what GC may delete.
 */
function byName(name: string) {
  const definition = loadServiceDefinitions().find((d) => d.name === name);
  if (!definition) throw new Error(`no service definition named ${name}`);
  return definition;
}
const LIFECYCLE_ENV = { LIFECYCLE_CASCADE_PARTICIPANTS: 'sealed-result-store' };
// The timer runs GC and the recovery pass often, and the recovery pass asks about every PENDING record at once.
const SEALED_ENV = { SEALED_GC_INTERVAL_MS: '200', SEALED_RECOVER_AFTER_MS: '0', SEALED_LEDGER_TIMEOUT_MS: '1000' };

function envelopeFor(functionCallId: string): SealedEnvelope {
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
  const prefix = uniquePrefix();
  let lifecycle: ServiceUnderTest;
  let sealed: ServiceUnderTest;
  let stopAll: () => Promise<void>;
  /** A lifecycle-store booted again after a test stopped the first: bootServices' stop does not know it. */
  let restarted: ServiceUnderTest | undefined;
  let client: SealedResultClient;
  let pg: Client;
  let sessions = 0;

  beforeAll(async () => {
    const booted = await bootServices(prefix, {
      lifecycle: { definition: byName('lifecycle-store'), env: LIFECYCLE_ENV },
      sealed: { definition: byName('sealed-result-store'), env: SEALED_ENV },
    });
    ({ lifecycle, sealed } = booted.services);
    stopAll = booted.stop;
    client = new SealedResultClient(sealed.client, { timeoutMs: 10_000 });
    pg = new Client({ connectionString: TEST_DATABASE_URL });
    await pg.connect();
  }, 30_000);

  afterAll(async () => {
    await pg?.end();
    await restarted?.stop();
    await stopAll?.();
    await dropSchemasWithPrefix(prefix);
  });

  const stateOf = async (recordId: string): Promise<{ state: string; event_id: string | null } | undefined> =>
    (await pg.query(`SELECT state, event_id FROM "${prefix}sealed_result_store".sealed_records WHERE record_id = $1`, [recordId])).rows[0];

  async function newSession(): Promise<SessionKey> {
    const session = { tenant: 'acme', appName: 'gc-app', userId: 'alice', sessionId: `gc-${++sessions}` };
    await lifecycle.client.request(LifecycleCreateSession, { session, creationOperationId: `create-${session.sessionId}` });
    return session;
  }

  const seal = (scope: SealedCreateScope, pendingTtlMs: number) =>
    client.create({ scope, operationInstanceId: `op-${scope.functionCallId}`, envelope: envelopeFor(scope.functionCallId), pendingTtlMs });

  /** Appends one event referencing `widget` by descriptor and `interactive` by the event-level map; no commit follows. */
  async function appendReferencing(session: SessionKey, widget: { fc: string; recordId: string }, interactive?: { fc: string; recordId: string }) {
    const event: LedgerEventInput = {
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
    const appended = await lifecycle.client.request(LifecycleAppendEvents, { session, incarnation: 1, provenance: { path: 'user-turn' }, events: [event] });
    return String(appended.eventIds[0]);
  }

  it('expired records an appended event references are committed to it, in both placements; the orphan is deleted', async () => {
    const session = await newSession();
    const [w, i, o] = ['fc-w', 'fc-i', 'fc-o'].map((fc) => ({ session, incarnation: 1, functionCallId: `${session.sessionId}-${fc}` }));
    const widget = await seal(w, 0);
    const interactive = await seal(i, 0);
    const orphan = await seal(o, 0);
    const eventId = await appendReferencing(
      session,
      { fc: w.functionCallId, recordId: widget.ref.recordId },
      { fc: i.functionCallId, recordId: interactive.ref.recordId },
    );
    // Whichever pass gets there first — the timer's or this one — the outcome is the same.
    await sealed.client.request(SealedGc, {});
    expect(await stateOf(widget.ref.recordId)).toEqual({ state: 'COMMITTED', event_id: eventId });
    expect(await stateOf(interactive.ref.recordId)).toEqual({ state: 'COMMITTED', event_id: eventId });
    expect(await stateOf(orphan.ref.recordId)).toBeUndefined();
    expect((await client.resolve({ ...w, eventId, recordId: widget.ref.recordId })).envelope).toEqual(envelopeFor(w.functionCallId));
    await expectAppError(sealed.client.request(SealedCommit, { key: { ...o, eventId, recordId: orphan.ref.recordId } }), 'NOT_FOUND');
  });

  it('the recovery pass commits the references of an appended event long before the records expire', async () => {
    const session = await newSession();
    const scope = { session, incarnation: 1, functionCallId: `${session.sessionId}-fc` };
    const created = await seal(scope, 600_000);
    const eventId = await appendReferencing(session, { fc: scope.functionCallId, recordId: created.ref.recordId });
    await eventually(async () => (await stateOf(created.ref.recordId))?.state === 'COMMITTED', 5_000);
    expect(await stateOf(created.ref.recordId)).toEqual({ state: 'COMMITTED', event_id: eventId });
  });

  it('the ledger is down: GC answers UNAVAILABLE and deletes nothing; once it is back, only the orphan goes', async () => {
    const session = await newSession();
    const referenced = { session, incarnation: 1, functionCallId: `${session.sessionId}-ref` };
    const orphanScope = { session, incarnation: 1, functionCallId: `${session.sessionId}-orphan` };
    await lifecycle.stop();
    let kept: Awaited<ReturnType<typeof seal>>;
    let orphan: Awaited<ReturnType<typeof seal>>;
    try {
      // The referenced record outlives the outage and the restart: a timer pass that runs between the restart and the
      // append below would otherwise find it expired and unreferenced (an orphan, then) and rightly delete it. The
      // orphan, expired at once, shows that no pass deletes anything while the ledger is down.
      kept = await seal(referenced, 8_000);
      orphan = await seal(orphanScope, 0);
      await expectAppError(sealed.client.request(SealedGc, {}, { timeoutMs: 10_000 }), 'UNAVAILABLE', 'LEDGER_UNAVAILABLE');
      await new Promise((r) => setTimeout(r, 600)); // several timer passes fail closed too
      expect((await stateOf(kept.ref.recordId))?.state).toBe('PENDING');
      expect((await stateOf(orphan.ref.recordId))?.state).toBe('PENDING');
    } finally {
      lifecycle = restarted = await bootService(byName('lifecycle-store'), prefix, LIFECYCLE_ENV);
    }
    const eventId = await appendReferencing(session, { fc: referenced.functionCallId, recordId: kept.ref.recordId });
    await sealed.client.request(SealedGc, {});
    expect(await stateOf(orphan.ref.recordId)).toBeUndefined();
    // The recovery pass commits it if it first asks the ledger after the append; if it asked just before (it asks once
    // per record), GC commits it when it expires, as the ledger then says it is referenced.
    await eventually(async () => (await stateOf(kept.ref.recordId))?.state === 'COMMITTED', 20_000);
    expect(await stateOf(kept.ref.recordId)).toEqual({ state: 'COMMITTED', event_id: eventId });
  }, 30_000);

  it('a deleted session: its records go with the cascade, referenced or not, and GC does not bring anything back', async () => {
    const session = await newSession();
    const scope = { session, incarnation: 1, functionCallId: `${session.sessionId}-fc` };
    const created = await seal(scope, 600_000);
    await appendReferencing(session, { fc: scope.functionCallId, recordId: created.ref.recordId });
    const deleted = await lifecycle.client.request(LifecycleDeleteSession, { session }, { timeoutMs: 10_000 });
    expect(deleted.state).toBe('DELETED');
    expect(await stateOf(created.ref.recordId)).toBeUndefined();
    await sealed.client.request(SealedGc, {});
    expect(await stateOf(created.ref.recordId)).toBeUndefined();
  });
});
