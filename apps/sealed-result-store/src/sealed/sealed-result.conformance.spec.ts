import {
  AppHostError,
  cascadeParticipantContract,
  SealedCommit,
  SealedCreate,
  SealedCreateBegin,
  SealedCreateChunk,
  SealedCreateFinish,
  SealedGc,
  SealedPurge,
  SealedReadChunk,
  SealedResolve,
  SealedRevoke,
  SealedResultStoreDescribe,
  SEALED_CHUNK_BYTES,
  type ExpectedStore,
  type SealedCreateScope,
  type SealedEnvelope,
} from '@apphost/contracts';
import { describeOnPostgres, dropSchemasWithPrefix, expectAppError, latch, startFakeLedger, uniquePrefix, type FakeLedger } from '@apphost/testing';
import { envelopeFor, keyOf, largeEnvelope, newSession, scopeOf, uid } from '../test/fixtures';
import { bootSealed, type SealedUnderTest } from '../test/sealed-harness';
import { SEALED_NOT_FOUND_MESSAGE } from './sealed-result.service';

/**
 * The sealed-store conformance list (the service's README), each case its own test, through the real bus (NATS) against
 * the real PostgreSQL and the embedded one. Crashes are modelled with fault points, not sleeps.
 */
describeOnPostgres('sealed-result-store', (target) => {
  describe('conformance', () => {
    const prefix = uniquePrefix();
    const standInPrefix = uniquePrefix();
    let store: SealedUnderTest;
    // GC asks the ledger before it deletes; this suite runs no lifecycle-store, so a double answers from what each
    // test says was appended (the plane suites run the real one).
    let ledger: FakeLedger;

    beforeAll(async () => {
      ledger = await startFakeLedger();
      store = await bootSealed(target.url, prefix);
    }, 60_000);

    afterAll(async () => {
      await store?.stop();
      await ledger?.stop();
      await dropSchemasWithPrefix(prefix, target.url);
      await dropSchemasWithPrefix(standInPrefix, target.url);
    }, 60_000);

    /**
     * Replicas of one service share its NATS queue group, so a second store must never serve next to the first:
     * stop the main store, run `work` against a stand-in (its own schema: an empty, swapped store, or one with other
     * limits), then bring the main store back on its own schema.
     */
    async function withStandIn<T>(schemaPrefix: string, env: Record<string, string>, work: (standIn: SealedUnderTest) => Promise<T>): Promise<T> {
      await store.stop();
      const standIn = await bootSealed(target.url, schemaPrefix, env);
      try {
        return await work(standIn);
      } finally {
        await standIn.stop();
        store = await bootSealed(target.url, prefix);
      }
    }

    /** create → (append elsewhere) → commit, the normal sealing path. */
    async function sealCommitted(scope: SealedCreateScope, envelope: SealedEnvelope = envelopeFor(scope.functionCallId)) {
      const created = await store.client.create({ scope, operationInstanceId: uid('op'), envelope });
      const eventId = uid('evt');
      await store.service.client.request(SealedCommit, { key: keyOf(scope, eventId, created.ref.recordId) });
      return { ref: created.ref, eventId, key: keyOf(scope, eventId, created.ref.recordId), envelope };
    }

    async function pinOf(s: SealedUnderTest): Promise<ExpectedStore> {
      const described = await s.service.client.request(SealedResultStoreDescribe, {});
      const { namespace, revision } = described.stores[0];
      if (!namespace || !revision) throw new Error('describe reported no namespace/revision');
      return { namespace, revision };
    }

    it('describe reports the persisted namespace and store revision', async () => {
      const described = await store.service.client.request(SealedResultStoreDescribe, {});
      expect(described.stores[0]).toMatchObject({ ready: true, revision: '1', schema: `${prefix}sealed_result_store` });
      const { rows } = await store.pg.query(`SELECT namespace::text AS ns FROM "${store.schema}".store_identity`);
      expect(described.stores[0].namespace).toBe(rows[0].ns);
      const persisted = await store.pg.query(`SELECT revision FROM "${store.schema}".sealed_store_revision`);
      expect(persisted.rows[0].revision).toBe('1');
    });

    it('creates PENDING, commits, and resolves the identical envelope behind a {recordId, schemaVersion} reference', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const envelope = envelopeFor(scope.functionCallId, { rows: [1, 2, 3], nested: { é: -0, big: 9007199254740991 } });
      const created = await store.client.create({ scope, operationInstanceId: uid('op'), envelope });
      expect(created).toEqual({ ref: { recordId: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/), schemaVersion: 1 }, state: 'PENDING', created: true });
      expect(Buffer.from(created.ref.recordId, 'base64url')).toHaveLength(16);
      expect((await store.recordRow(created.ref.recordId))?.state).toBe('PENDING');
      const eventId = uid('evt');
      const committed = await store.service.client.request(SealedCommit, { key: keyOf(scope, eventId, created.ref.recordId) });
      expect(committed).toEqual({ ref: created.ref, state: 'COMMITTED', eventId });
      const again = await store.service.client.request(SealedCommit, { key: keyOf(scope, eventId, created.ref.recordId) });
      expect(again).toEqual(committed);
      const resolved = await store.client.resolve(keyOf(scope, eventId, created.ref.recordId));
      expect(resolved.ref).toEqual(created.ref);
      expect(resolved.envelope).toEqual({
        ...envelope,
        result: { ...envelope.result, structuredContent: { rows: [1, 2, 3], nested: { é: 0, big: 9007199254740991 } } },
      });
    });

    it('never puts the digest into any public serialization of a reference or reply', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const created = await store.client.create({ scope, operationInstanceId: uid('op'), envelope: envelopeFor(scope.functionCallId) });
      const eventId = uid('evt');
      const committed = await store.service.client.request(SealedCommit, { key: keyOf(scope, eventId, created.ref.recordId) });
      const resolved = await store.service.client.request(SealedResolve, { key: keyOf(scope, eventId, created.ref.recordId) });
      const row = await store.recordRow(created.ref.recordId);
      if (!row) throw new Error('record row missing');
      const digest = row.digest;
      const forms = [digest.toString('hex'), digest.toString('base64'), digest.toString('base64url'), digest.toString('hex').toUpperCase()];
      for (const reply of [created, committed, resolved]) {
        const text = JSON.stringify(reply);
        for (const form of forms) expect(text).not.toContain(form);
        expect(text).not.toMatch(/digest/i);
      }
      expect(Object.keys(created.ref).sort()).toEqual(['recordId', 'schemaVersion']);
      expect(JSON.stringify(created.ref)).toBe(`{"recordId":"${created.ref.recordId}","schemaVersion":1}`);
    });

    it('scopes records by tenant: the same session ids under another tenant are NOT_FOUND, exactly like an absent record', async () => {
      const session = newSession({ tenant: 'acme' });
      const { key } = await sealCommitted(scopeOf(session, 1, uid('fc')));
      const absent = await expectAppError(store.client.resolve({ ...key, recordId: 'A'.repeat(22) }), 'NOT_FOUND');
      const foreignTenant = await expectAppError(store.client.resolve({ ...key, session: { ...session, tenant: 'globex' } }), 'NOT_FOUND');
      expect(foreignTenant.toEnvelope()).toEqual(absent.toEnvelope());
      expect(absent.message).toBe(SEALED_NOT_FOUND_MESSAGE);
      await expectAppError(store.service.client.request(SealedCommit, { key: { ...key, session: { ...session, tenant: 'globex' } } }), 'NOT_FOUND');
    });

    it('rejects a reference swapped across sessions, users and tenants (and events, calls, incarnations) as NOT_FOUND', async () => {
      const alice = newSession();
      const bob = newSession();
      const a = await sealCommitted(scopeOf(alice, 1, uid('fc')));
      const b = await sealCommitted(scopeOf(bob, 1, uid('fc')));
      const absent = (await expectAppError(store.client.resolve({ ...a.key, recordId: 'B'.repeat(22) }), 'NOT_FOUND')).toEnvelope();
      const swaps = [
        { ...a.key, recordId: b.ref.recordId }, // bob's reference in alice's session
        { ...b.key, recordId: a.ref.recordId }, // and the reverse
        { ...a.key, session: { ...alice, sessionId: bob.sessionId } }, // another session of the same user
        { ...a.key, session: { ...alice, userId: bob.userId } }, // another user
        { ...a.key, session: { ...alice, tenant: 'initech' } }, // another tenant
        { ...a.key, session: { ...alice, appName: 'other-app' } }, // another app
        { ...a.key, eventId: b.eventId }, // another event
        { ...a.key, functionCallId: b.key.functionCallId }, // another function call
        { ...a.key, incarnation: 2 }, // an incarnation the record does not belong to
      ];
      for (const key of swaps) {
        expect((await expectAppError(store.client.resolve(key), 'NOT_FOUND')).toEnvelope()).toEqual(absent);
        await expectAppError(store.service.client.request(SealedReadChunk, { key, index: 0 }), 'NOT_FOUND');
      }
      expect((await store.client.resolve(a.key)).ref).toEqual(a.ref); // the right key still works
    });

    it('scopes records by incarnation: after the session moves on, the old incarnation fails typed on resolve, commit and create', async () => {
      const session = newSession();
      const one = await sealCommitted(scopeOf(session, 1, uid('fc')));
      const pendingScope = scopeOf(session, 1, uid('fc'));
      const pending = await store.client.create({ scope: pendingScope, operationInstanceId: uid('op'), envelope: envelopeFor(pendingScope.functionCallId) });
      const two = await sealCommitted(scopeOf(session, 2, uid('fc'))); // the store learns incarnation 2 from its caller
      await expectAppError(store.client.resolve(one.key), 'FAILED_PRECONDITION', 'STALE_INCARNATION');
      await expectAppError(store.service.client.request(SealedReadChunk, { key: one.key, index: 0 }), 'FAILED_PRECONDITION', 'STALE_INCARNATION');
      await expectAppError(
        store.service.client.request(SealedCommit, { key: keyOf(pendingScope, uid('evt'), pending.ref.recordId) }),
        'FAILED_PRECONDITION',
        'STALE_INCARNATION',
      );
      await expectAppError(
        store.client.create({ scope: scopeOf(session, 1, 'fc-late'), operationInstanceId: uid('op'), envelope: envelopeFor('fc-late') }),
        'FAILED_PRECONDITION',
        'STALE_INCARNATION',
      );
      // The old reference named under the new incarnation is simply not there.
      await expectAppError(store.client.resolve({ ...one.key, incarnation: 2 }), 'NOT_FOUND');
      expect((await store.client.resolve(two.key)).ref).toEqual(two.ref);
    });

    it('crash after the store write: the orphan stays PENDING, GC collects it, and a late commit fails typed', async () => {
      const session = newSession();
      const scope = scopeOf(session, 1, uid('fc'));
      store.faults.arm('create.after-store-write');
      const crashed = await expectAppError(
        store.client.create({ scope, operationInstanceId: uid('op'), envelope: envelopeFor(scope.functionCallId), pendingTtlMs: 0 }),
        'INTERNAL',
      );
      expect(crashed.message).toBe('internal error');
      const { rows } = await store.pg.query(`SELECT record_id, state FROM "${store.schema}".sealed_records WHERE session_id = $1`, [session.sessionId]);
      expect(rows).toEqual([{ record_id: expect.any(String), state: 'PENDING' }]);
      const gc = await store.service.client.request(SealedGc, {});
      expect(gc.deletedRecords).toBeGreaterThanOrEqual(1);
      expect(await store.countRecords(session)).toBe(0);
      await expectAppError(store.service.client.request(SealedCommit, { key: keyOf(scope, uid('evt'), rows[0].record_id) }), 'NOT_FOUND');
    });

    it('crash after append (commit never ran): the event still resolves its seal, which is then bound and survives GC', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const envelope = envelopeFor(scope.functionCallId);
      const created = await store.client.create({ scope, operationInstanceId: uid('op'), envelope, pendingTtlMs: 0 });
      const eventId = uid('evt'); // the event carrying the reference was appended by the lifecycle-store
      store.faults.arm('commit.before-write'); // … and the coordinator died before its commit landed
      await expectAppError(store.service.client.request(SealedCommit, { key: keyOf(scope, eventId, created.ref.recordId) }), 'INTERNAL');
      expect((await store.recordRow(created.ref.recordId))?.state).toBe('PENDING');
      const resolved = await store.client.resolve(keyOf(scope, eventId, created.ref.recordId));
      expect(resolved.envelope).toEqual(envelope);
      expect(await store.recordRow(created.ref.recordId)).toMatchObject({ state: 'COMMITTED', event_id: eventId });
      await store.service.client.request(SealedGc, {});
      expect((await store.client.resolve(keyOf(scope, eventId, created.ref.recordId))).envelope).toEqual(envelope);
      // Bound to that event now: another event id cannot claim it.
      await expectAppError(store.client.resolve(keyOf(scope, uid('evt'), created.ref.recordId)), 'NOT_FOUND');
    });

    it('crash after append, nothing resolved it: GC asks the ledger, commits the referenced record, deletes only the orphan', async () => {
      const session = newSession();
      const referenced = scopeOf(session, 1, uid('fc'));
      const orphan = scopeOf(session, 1, uid('fc'));
      const kept = await store.client.create({
        scope: referenced,
        operationInstanceId: uid('op'),
        envelope: envelopeFor(referenced.functionCallId),
        pendingTtlMs: 0,
      });
      const gone = await store.client.create({ scope: orphan, operationInstanceId: uid('op'), envelope: envelopeFor(orphan.functionCallId), pendingTtlMs: 0 });
      ledger.append({ ...referenced, recordId: kept.ref.recordId }, 7); // appended; its commit never came
      // The ledger matches the whole key: the orphan's id under another call or incarnation is no reference.
      ledger.append({ ...orphan, functionCallId: uid('fc'), recordId: gone.ref.recordId }, 8);
      ledger.append({ ...orphan, incarnation: 2, recordId: gone.ref.recordId }, 9);
      const gc = await store.service.client.request(SealedGc, {});
      expect(gc.committedRecords).toBeGreaterThanOrEqual(1);
      expect(await store.recordRow(kept.ref.recordId)).toMatchObject({ state: 'COMMITTED', event_id: '7' });
      expect(await store.recordRow(gone.ref.recordId)).toBeUndefined();
      expect((await store.client.resolve(keyOf(referenced, '7', kept.ref.recordId))).ref).toEqual(kept.ref);
    });

    it('the ledger does not answer: GC is UNAVAILABLE (LEDGER_UNAVAILABLE) and deletes no record', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const created = await store.client.create({ scope, operationInstanceId: uid('op'), envelope: envelopeFor(scope.functionCallId), pendingTtlMs: 0 });
      await ledger.stop();
      try {
        const refused = await expectAppError(store.service.client.request(SealedGc, {}, { timeoutMs: 10_000 }), 'UNAVAILABLE', 'LEDGER_UNAVAILABLE');
        expect(refused.retryable).toBe(true);
        expect((await store.recordRow(created.ref.recordId))?.state).toBe('PENDING');
      } finally {
        ledger = await startFakeLedger();
      }
      await store.service.client.request(SealedGc, {});
      expect(await store.recordRow(created.ref.recordId)).toBeUndefined();
    });

    it('a revoked incarnation: GC deletes its expired records even when the ledger still references them', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const created = await store.client.create({ scope, operationInstanceId: uid('op'), envelope: envelopeFor(scope.functionCallId), pendingTtlMs: 0 });
      ledger.append({ ...scope, recordId: created.ref.recordId }, 3); // the cascade has not deleted the events yet
      await store.service.client.request(SealedRevoke, { session: scope.session, incarnation: 1 });
      await store.service.client.request(SealedGc, {});
      expect(await store.recordRow(created.ref.recordId)).toBeUndefined();
    });

    it('recovery pass: commits referenced PENDING records older than the recovery age, asks about each orphan once', async () => {
      const session = newSession();
      const referenced = scopeOf(session, 1, uid('fc'));
      const orphan = scopeOf(session, 1, uid('fc'));
      const young = scopeOf(session, 1, uid('fc'));
      const kept = await store.client.create({ scope: referenced, operationInstanceId: uid('op'), envelope: envelopeFor(referenced.functionCallId) });
      const lone = await store.client.create({ scope: orphan, operationInstanceId: uid('op'), envelope: envelopeFor(orphan.functionCallId) });
      const fresh = await store.client.create({ scope: young, operationInstanceId: uid('op'), envelope: envelopeFor(young.functionCallId) });
      ledger.append({ ...referenced, recordId: kept.ref.recordId }, 11);
      ledger.append({ ...young, recordId: fresh.ref.recordId }, 12);
      await store.pg.query(`UPDATE "${store.schema}".sealed_records SET created_at = now() - interval '1 hour' WHERE record_id = ANY ($1)`, [
        [kept.ref.recordId, lone.ref.recordId],
      ]);
      expect(await store.collector.recover()).toEqual({ committedRecords: 1 });
      expect(await store.recordRow(kept.ref.recordId)).toMatchObject({ state: 'COMMITTED', event_id: '11' });
      // Too young to ask about (its commit may be on its way), and not expired: left alone.
      expect((await store.recordRow(fresh.ref.recordId))?.state).toBe('PENDING');
      expect((await store.recordRow(lone.ref.recordId))?.state).toBe('PENDING');
      const checked = await store.pg.query(`SELECT ledger_checked_at FROM "${store.schema}".sealed_records WHERE record_id = $1`, [lone.ref.recordId]);
      expect(checked.rows[0].ledger_checked_at).toBeInstanceOf(Date);
      ledger.append({ ...orphan, recordId: lone.ref.recordId }, 13); // appended late: GC's check at expiry finds it
      expect(await store.collector.recover()).toEqual({ committedRecords: 0 });
    });

    it('retry before GC returns the same record; retry after GC seals a fresh one and the old reference is gone', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const operationInstanceId = uid('op');
      const envelope = envelopeFor(scope.functionCallId);
      const first = await store.client.create({ scope, operationInstanceId, envelope, pendingTtlMs: 0 });
      const retry = await store.client.create({ scope, operationInstanceId, envelope, pendingTtlMs: 0 });
      expect(retry).toEqual({ ref: first.ref, state: 'PENDING', created: false });
      await store.service.client.request(SealedGc, {});
      expect(await store.recordRow(first.ref.recordId)).toBeUndefined();
      const afterGc = await store.client.create({ scope, operationInstanceId, envelope });
      expect(afterGc.created).toBe(true);
      expect(afterGc.ref.recordId).not.toBe(first.ref.recordId);
      await expectAppError(store.service.client.request(SealedCommit, { key: keyOf(scope, uid('evt'), first.ref.recordId) }), 'NOT_FOUND');
      const eventId = uid('evt');
      await store.service.client.request(SealedCommit, { key: keyOf(scope, eventId, afterGc.ref.recordId) });
      // A retry after commit still converges on the committed record.
      expect(await store.client.create({ scope, operationInstanceId, envelope })).toEqual({ ref: afterGc.ref, state: 'COMMITTED', created: false });
    });

    it('same operation instance with different bytes is CONFLICT and the stored record is unchanged', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const operationInstanceId = uid('op');
      const original = envelopeFor(scope.functionCallId, { answer: 42 });
      const created = await store.client.create({ scope, operationInstanceId, envelope: original });
      const before = await store.recordRow(created.ref.recordId);
      await expectAppError(
        store.client.create({ scope, operationInstanceId, envelope: envelopeFor(scope.functionCallId, { answer: 43 }) }),
        'CONFLICT',
        'OPERATION_INSTANCE_CONFLICT',
      );
      // The same instance in another scope is a conflict too, never a second record.
      await expectAppError(
        store.client.create({ scope: { ...scope, session: newSession() }, operationInstanceId, envelope: original }),
        'CONFLICT',
        'OPERATION_INSTANCE_CONFLICT',
      );
      expect(await store.recordRow(created.ref.recordId)).toEqual(before);
      const eventId = uid('evt');
      await store.service.client.request(SealedCommit, { key: keyOf(scope, eventId, created.ref.recordId) });
      expect((await store.client.resolve(keyOf(scope, eventId, created.ref.recordId))).envelope).toEqual(original);
    });

    it('concurrent creates of one instance with different bytes: exactly one wins, the loser sees CONFLICT (20 rounds)', async () => {
      for (let round = 0; round < 20; round++) {
        const scope = scopeOf(newSession(), 1, uid('fc'));
        const operationInstanceId = uid('op');
        const envelopes = [envelopeFor(scope.functionCallId, { v: 'a' }), envelopeFor(scope.functionCallId, { v: 'b' })];
        const outcomes = await Promise.allSettled(envelopes.map((envelope) => store.client.create({ scope, operationInstanceId, envelope })));
        const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [{ i, ref: o.value.ref }] : []));
        const lost = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as AppHostError] : []));
        expect(won).toHaveLength(1);
        expect(lost.map((e) => [e.code, e.details?.reason])).toEqual([['CONFLICT', 'OPERATION_INSTANCE_CONFLICT']]);
        expect(await store.countRecords(scope.session)).toBe(1);
        const eventId = uid('evt');
        await store.service.client.request(SealedCommit, { key: keyOf(scope, eventId, won[0].ref.recordId) });
        expect((await store.client.resolve(keyOf(scope, eventId, won[0].ref.recordId))).envelope).toEqual(envelopes[won[0].i]);
      }
    });

    it('append timeout, then the late commit lands: the record is committed, retries are idempotent, GC keeps it', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const envelope = envelopeFor(scope.functionCallId);
      const created = await store.client.create({ scope, operationInstanceId: uid('op'), envelope, pendingTtlMs: 0 });
      const key = keyOf(scope, uid('evt'), created.ref.recordId);
      const held = latch();
      const landed = latch();
      store.faults.arm('commit.before-write', () => held.promise);
      store.faults.arm('commit.after-write', () => landed.release());
      const timedOut = await expectAppError(store.service.client.request(SealedCommit, { key }, { timeoutMs: 300 }), 'OUTCOME_UNKNOWN');
      expect(timedOut.retryable).toBe(false);
      expect((await store.recordRow(created.ref.recordId))?.state).toBe('PENDING');
      held.release(); // the late commit proceeds after its caller gave up
      await landed.promise;
      expect(await store.recordRow(created.ref.recordId)).toMatchObject({ state: 'COMMITTED', event_id: key.eventId });
      expect(await store.service.client.request(SealedCommit, { key })).toEqual({ ref: created.ref, state: 'COMMITTED', eventId: key.eventId });
      await expectAppError(store.service.client.request(SealedCommit, { key: { ...key, eventId: uid('evt') } }), 'CONFLICT', 'EVENT_CONFLICT');
      await store.service.client.request(SealedGc, {});
      expect((await store.client.resolve(key)).envelope).toEqual(envelope);
    });

    it('deletion cascade: purge removes the incarnation, fences it, is idempotent, and leaves other sessions alone', async () => {
      const session = newSession();
      const bystander = newSession();
      const committed = await sealCommitted(scopeOf(session, 1, uid('fc')));
      const pendingScope = scopeOf(session, 1, uid('fc'));
      await store.client.create({ scope: pendingScope, operationInstanceId: uid('op'), envelope: envelopeFor(pendingScope.functionCallId) });
      const upload = await store.service.client.request(SealedCreateBegin, {
        scope: scopeOf(session, 1, uid('fc')),
        operationInstanceId: uid('op'),
        totalBytes: 10,
      });
      const kept = await sealCommitted(scopeOf(bystander, 1, uid('fc')));
      // The lifecycle-store's cascade driver speaks its generic participant contract to this store.
      const revoke = cascadeParticipantContract('sealed-result-store', 'revoke');
      const purge = cascadeParticipantContract('sealed-result-store', 'purge');
      expect(revoke.subject).toBe(SealedRevoke.subject);
      expect(purge.subject).toBe(SealedPurge.subject);
      expect(await store.service.client.request(revoke, { session, incarnation: 1 })).toEqual({ done: true });
      expect(await store.service.client.request(SealedRevoke, { session, incarnation: 1 })).toEqual({ done: true });
      await expectAppError(store.client.resolve(committed.key), 'FAILED_PRECONDITION', 'STALE_INCARNATION');
      expect(await store.countRecords(session)).toBe(2); // revoke fences; bytes go with purge
      expect(await store.service.client.request(purge, { session, incarnation: 1 })).toEqual({ done: true, deletedRecords: 2 });
      expect(await store.countRecords(session)).toBe(0);
      expect((await store.pg.query(`SELECT count(*)::int AS n FROM "${store.schema}".sealed_uploads WHERE upload_id = $1`, [upload.uploadId])).rows[0].n).toBe(
        0,
      );
      expect(await store.service.client.request(SealedPurge, { session, incarnation: 1 })).toEqual({ done: true, deletedRecords: 0 });
      await expectAppError(store.client.resolve(committed.key), 'FAILED_PRECONDITION', 'STALE_INCARNATION');
      await expectAppError(
        store.client.create({ scope: scopeOf(session, 1, 'fc-late'), operationInstanceId: uid('op'), envelope: envelopeFor('fc-late') }),
        'FAILED_PRECONDITION',
        'STALE_INCARNATION',
      );
      await expectAppError(
        store.service.client.request(SealedCreateChunk, { uploadId: upload.uploadId, index: 0, data: Buffer.alloc(10).toString('base64') }),
        'NOT_FOUND',
        'UPLOAD_NOT_FOUND',
      );
      expect((await store.client.resolve(kept.key)).ref).toEqual(kept.ref);
      // The recreated session's next incarnation seals normally.
      const next = await sealCommitted(scopeOf(session, 2, uid('fc')));
      expect((await store.client.resolve(next.key)).ref).toEqual(next.ref);
    });

    it('detects a bit flipped in the stored bytes: DATA_LOSS with reason DIGEST_MISMATCH and no bytes', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const { key, ref } = await sealCommitted(scope, envelopeFor(scope.functionCallId, { secret: 'PAYLOAD-MARKER-7' }));
      await store.pg.query(`UPDATE "${store.schema}".sealed_records SET body = set_byte(body, 10, get_byte(body, 10) # 1) WHERE record_id = $1`, [
        ref.recordId,
      ]);
      const error = await expectAppError(store.client.resolve(key), 'DATA_LOSS', 'DIGEST_MISMATCH');
      expect(error.details).toEqual({ reason: 'DIGEST_MISMATCH' });
      expect(JSON.stringify(error.toEnvelope())).not.toContain('PAYLOAD-MARKER-7');
    });

    it('detects stored bytes that are no longer UTF-8: DATA_LOSS, and a PENDING record is still bound to its event', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const { key, ref } = await sealCommitted(scope, envelopeFor(scope.functionCallId, { secret: 'PAYLOAD-MARKER-8' }));
      await store.pg.query(`UPDATE "${store.schema}".sealed_records SET body = set_byte(body, 10, 255) WHERE record_id = $1`, [ref.recordId]);
      const error = await expectAppError(store.client.resolve(key), 'DATA_LOSS', 'DIGEST_MISMATCH');
      expect(JSON.stringify(error.toEnvelope())).not.toContain('PAYLOAD-MARKER-8');
      // The crash-after-append path on a corrupted PENDING record binds it exactly as before, then refuses the bytes.
      const pendingScope = scopeOf(newSession(), 1, uid('fc'));
      const pending = await store.client.create({ scope: pendingScope, operationInstanceId: uid('op'), envelope: envelopeFor(pendingScope.functionCallId) });
      await store.pg.query(`UPDATE "${store.schema}".sealed_records SET body = set_byte(body, 0, 192) WHERE record_id = $1`, [pending.ref.recordId]);
      const eventId = uid('evt');
      await expectAppError(store.client.resolve(keyOf(pendingScope, eventId, pending.ref.recordId)), 'DATA_LOSS', 'DIGEST_MISMATCH');
      expect(await store.recordRow(pending.ref.recordId)).toMatchObject({ state: 'COMMITTED', event_id: eventId });
    });

    it('keeps the record invariants in the database (sealed_records_valid): state and event id, incarnation, digest and sizes', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const { ref } = await sealCommitted(scope);
      const update = (set: string) => store.pg.query(`UPDATE "${store.schema}".sealed_records SET ${set} WHERE record_id = $1`, [ref.recordId]);
      const checkViolation = { code: '23514' };
      await expect(update(`event_id = NULL`)).rejects.toMatchObject(checkViolation); // COMMITTED without an event
      await expect(update(`state = 'PENDING'`)).rejects.toMatchObject(checkViolation); // PENDING with an event
      await expect(update(`state = 'LOST', event_id = NULL`)).rejects.toMatchObject(checkViolation);
      await expect(update(`incarnation = 0`)).rejects.toMatchObject(checkViolation);
      await expect(update(`digest = substring(digest FROM 2)`)).rejects.toMatchObject(checkViolation);
      await expect(update(`body = body || '\\x20'::bytea`)).rejects.toMatchObject(checkViolation);
      await expect(update(`size_bytes = 0, body = ''::bytea`)).rejects.toMatchObject(checkViolation);
      await expect(update(`chunk_digests = chunk_digests || chunk_digests`)).rejects.toMatchObject(checkViolation);
      expect(await store.recordRow(ref.recordId)).toMatchObject({ state: 'COMMITTED' });
    });

    it('detects a bit flipped inside one chunk of a large record, on resolve and on that chunk read', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const { key, ref } = await sealCommitted(scope, largeEnvelope(scope.functionCallId, 2 * 1024 * 1024));
      const offset = 3 * SEALED_CHUNK_BYTES + 17; // inside chunk 3
      await store.pg.query(`UPDATE "${store.schema}".sealed_records SET body = set_byte(body, $2, get_byte(body, $2) # 16) WHERE record_id = $1`, [
        ref.recordId,
        offset,
      ]);
      await expectAppError(store.client.resolve(key), 'DATA_LOSS', 'DIGEST_MISMATCH');
      await expectAppError(store.service.client.request(SealedReadChunk, { key, index: 3 }), 'DATA_LOSS', 'DIGEST_MISMATCH');
      expect((await store.service.client.request(SealedReadChunk, { key, index: 2 })).index).toBe(2); // intact chunks still verify
    });

    it('rejects a namespace or revision mismatch, and an empty swapped store cannot honour another store’s references', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const pinned = await pinOf(store);
      const { key } = await sealCommitted(scope);
      expect((await store.client.resolve(key, pinned)).ref.recordId).toBe(key.recordId);
      const otherNamespace = { ...pinned, namespace: '00000000-0000-4000-8000-000000000000' };
      const otherRevision = { ...pinned, revision: '2' };
      for (const expectedStore of [otherNamespace, otherRevision]) {
        await expectAppError(store.client.resolve(key, expectedStore), 'FAILED_PRECONDITION', 'STORE_MISMATCH');
        await expectAppError(store.service.client.request(SealedCommit, { key, expectedStore }), 'FAILED_PRECONDITION', 'STORE_MISMATCH');
        await expectAppError(
          store.client.create({ scope, operationInstanceId: uid('op'), envelope: envelopeFor(scope.functionCallId), expectedStore }),
          'FAILED_PRECONDITION',
          'STORE_MISMATCH',
        );
      }
      // The swapped-in store has its own namespace: the caller's pin is refused there before anything is read or written.
      await withStandIn(standInPrefix, {}, async (swapped) => {
        expect((await pinOf(swapped)).namespace).not.toBe(pinned.namespace);
        await expectAppError(swapped.client.resolve(key, pinned), 'FAILED_PRECONDITION', 'STORE_MISMATCH');
        await expectAppError(
          swapped.client.create({ scope, operationInstanceId: uid('op'), envelope: envelopeFor(scope.functionCallId), expectedStore: pinned }),
          'FAILED_PRECONDITION',
          'STORE_MISMATCH',
        );
        expect(await swapped.countSessionRows(scope.session)).toBe(0);
        await expectAppError(swapped.client.resolve(key), 'NOT_FOUND'); // unpinned, it simply does not know the reference
      });
      expect((await store.client.resolve(key, pinned)).ref.recordId).toBe(key.recordId);
    }, 60_000);

    /**
     * How one GC-vs-commit round is ordered. How a free race splits depends on scheduling (it can be one-sided on a
     * given machine), so two of every three rounds hold one side at a fault point until the other has settled: both
     * outcomes then occur on every run, and the free rounds still exercise the real interleavings.
     */
    type RaceMode = 'free' | 'commit-first' | 'gc-first';
    const raceModes: RaceMode[] = ['free', 'commit-first', 'gc-first'];

    const settle = <T>(p: Promise<T>): Promise<PromiseSettledResult<T>> =>
      p.then(
        (value): PromiseSettledResult<T> => ({ status: 'fulfilled', value }),
        (reason: unknown): PromiseSettledResult<T> => ({ status: 'rejected', reason }),
      );

    async function raceRound<G, C>(
      mode: RaceMode,
      gc: () => Promise<G>,
      commit: () => Promise<C>,
    ): Promise<[PromiseSettledResult<G>, PromiseSettledResult<C>]> {
      if (mode === 'free') return Promise.all([settle(gc()), settle(commit())]);
      const held = latch();
      const heldPoint = mode === 'commit-first' ? 'gc.before-delete' : 'commit.before-write';
      store.faults.arm(heldPoint, () => held.promise);
      const gcRun = settle(gc());
      const commitRun = settle(commit());
      await (mode === 'commit-first' ? commitRun : gcRun);
      held.release();
      return [await gcRun, await commitRun];
    }

    /** One round's invariant: exactly one side won, and the record's fate matches the winner. */
    async function expectOneWinner(
      mode: RaceMode,
      commit: PromiseSettledResult<unknown>,
      created: { ref: { recordId: string } },
      key: ReturnType<typeof keyOf>,
      resolve: () => Promise<{ ref: unknown }>,
    ): Promise<'commit' | 'gc'> {
      const row = await store.recordRow(created.ref.recordId);
      if (commit.status === 'fulfilled') {
        expect({ mode, row: row && { state: row.state, event_id: row.event_id } }).toEqual({ mode, row: { state: 'COMMITTED', event_id: key.eventId } });
        expect((await resolve()).ref).toEqual(created.ref);
        return 'commit';
      }
      expect(commit.reason).toBeInstanceOf(AppHostError);
      expect({ mode, code: (commit.reason as AppHostError).code, row }).toEqual({ mode, code: 'NOT_FOUND', row: undefined });
      return 'gc';
    }

    it('GC racing commit never deletes a committed record (200 rounds; each round exactly one of commit or GC wins, and both outcomes occur)', async () => {
      const outcomes: Record<RaceMode, { commit: number; gc: number }> = {
        free: { commit: 0, gc: 0 },
        'commit-first': { commit: 0, gc: 0 },
        'gc-first': { commit: 0, gc: 0 },
      };
      for (let round = 0; round < 200; round++) {
        const mode = raceModes[round % raceModes.length];
        const scope = scopeOf(newSession(), 1, uid('fc'));
        const created = await store.domain.create({ scope, operationInstanceId: uid('op'), envelope: envelopeFor(scope.functionCallId), pendingTtlMs: 0 });
        const key = keyOf(scope, uid('evt'), created.ref.recordId);
        const [gc, commit] = await raceRound(
          mode,
          () => store.collector.gc(),
          () => store.domain.commit(key, undefined),
        );
        expect(gc.status).toBe('fulfilled');
        outcomes[mode][await expectOneWinner(mode, commit, created, key, () => store.domain.resolve(key, undefined))]++;
      }
      process.stdout.write(`[${target.name}] GC vs commit race, 200 rounds: ${JSON.stringify(outcomes)}\n`);
      // A held-back GC finds the record committed; a held-back commit finds it collected.
      expect(outcomes['commit-first']).toEqual({ commit: 67, gc: 0 });
      expect(outcomes['gc-first']).toEqual({ commit: 0, gc: 66 });
      expect(outcomes.free.commit + outcomes.free.gc).toBe(67);
    }, 120_000);

    it('GC racing commit through the bus, 51 rounds: a committed record always survives, a collected one is never committed', async () => {
      const outcomes: Record<RaceMode, { commit: number; gc: number }> = {
        free: { commit: 0, gc: 0 },
        'commit-first': { commit: 0, gc: 0 },
        'gc-first': { commit: 0, gc: 0 },
      };
      for (let round = 0; round < 51; round++) {
        const mode = raceModes[round % raceModes.length];
        const scope = scopeOf(newSession(), 1, uid('fc'));
        const created = await store.client.create({ scope, operationInstanceId: uid('op'), envelope: envelopeFor(scope.functionCallId), pendingTtlMs: 0 });
        const key = keyOf(scope, uid('evt'), created.ref.recordId);
        const [gc, commit] = await raceRound(
          mode,
          () => store.service.client.request(SealedGc, {}),
          () => store.service.client.request(SealedCommit, { key }),
        );
        expect(gc.status).toBe('fulfilled');
        outcomes[mode][await expectOneWinner(mode, commit, created, key, () => store.client.resolve(key))]++;
      }
      expect(outcomes['commit-first']).toEqual({ commit: 17, gc: 0 });
      expect(outcomes['gc-first']).toEqual({ commit: 0, gc: 17 });
      expect(outcomes.free.commit + outcomes.free.gc).toBe(17);
    }, 60_000);

    it('resolve racing the commit of the same record to the same event always answers the record (100 rounds)', async () => {
      // The batch answers before its commit lands, so a View or an export may resolve while it is in flight.
      for (let round = 0; round < 100; round++) {
        const scope = scopeOf(newSession(), 1, uid('fc'));
        const created = await store.client.create({ scope, operationInstanceId: uid('op'), envelope: envelopeFor(scope.functionCallId) });
        const key = keyOf(scope, uid('evt'), created.ref.recordId);
        const [commit, resolved] = await Promise.allSettled([store.service.client.request(SealedCommit, { key }), store.client.resolve(key)]);
        expect({ round, commit: commit.status, resolve: resolved.status === 'fulfilled' ? 'ok' : String(resolved.reason) }).toEqual({
          round,
          commit: 'fulfilled',
          resolve: 'ok',
        });
        expect(await store.recordRow(created.ref.recordId)).toMatchObject({ state: 'COMMITTED', event_id: key.eventId });
      }
    }, 120_000);

    it('a 5 MiB result round-trips through the bus in bounded chunks', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const envelope = largeEnvelope(scope.functionCallId, 5 * 1024 * 1024);
      const sent: number[] = [];
      const request = store.service.client.request.bind(store.service.client);
      const spy = jest.spyOn(store.service.client, 'request').mockImplementation(async (contract, payload, opts) => {
        sent.push(Buffer.byteLength(JSON.stringify(payload)));
        return request(contract, payload, opts);
      });
      try {
        const created = await store.client.create({ scope, operationInstanceId: uid('op'), envelope });
        const eventId = uid('evt');
        await store.service.client.request(SealedCommit, { key: keyOf(scope, eventId, created.ref.recordId) });
        const reply = await store.service.client.request(SealedResolve, { key: keyOf(scope, eventId, created.ref.recordId) });
        expect(reply).toMatchObject({ transfer: 'chunked', chunkBytes: SEALED_CHUNK_BYTES });
        if (reply.transfer !== 'chunked') throw new Error('expected a chunked reply');
        expect(reply.totalBytes).toBeGreaterThanOrEqual(5 * 1024 * 1024);
        expect(reply.chunkCount).toBe(Math.ceil(reply.totalBytes / SEALED_CHUNK_BYTES));
        const resolved = await store.client.resolve(keyOf(scope, eventId, created.ref.recordId));
        expect(resolved.envelope).toEqual(envelope);
      } finally {
        spy.mockRestore();
      }
      expect(Math.max(...sent)).toBeLessThan(1024 * 1024 - 8 * 1024);
      expect(sent.length).toBeGreaterThan(10);
    });

    it('chunked uploads are bounded and idempotent per chunk: repeat ok, other bytes CONFLICT, wrong size or index rejected, incomplete finish refused', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const bytes = Buffer.from(JSON.stringify(largeEnvelope(scope.functionCallId, SEALED_CHUNK_BYTES + 1000)));
      const begun = await store.service.client.request(SealedCreateBegin, { scope, operationInstanceId: uid('op'), totalBytes: bytes.length });
      expect(begun).toMatchObject({ chunkBytes: SEALED_CHUNK_BYTES, chunkCount: 2 });
      const chunk = (i: number) => bytes.subarray(i * SEALED_CHUNK_BYTES, (i + 1) * SEALED_CHUNK_BYTES);
      const put = (index: number, data: Buffer) =>
        store.service.client.request(SealedCreateChunk, { uploadId: begun.uploadId, index, data: data.toString('base64') });
      await put(0, chunk(0));
      await put(0, chunk(0)); // idempotent repeat
      const altered = Buffer.from(chunk(0));
      altered[5] ^= 1;
      await expectAppError(put(0, altered), 'CONFLICT', 'CHUNK_CONFLICT');
      await expectAppError(put(1, chunk(1).subarray(1)), 'INVALID_ARGUMENT', 'CHUNK_SIZE');
      await expectAppError(put(2, chunk(1)), 'INVALID_ARGUMENT', 'CHUNK_OUT_OF_RANGE');
      await expectAppError(store.service.client.request(SealedCreateFinish, { uploadId: begun.uploadId }), 'FAILED_PRECONDITION', 'UPLOAD_INCOMPLETE');
      expect(await store.countRecords(scope.session)).toBe(0);
      await put(1, chunk(1));
      const created = await store.service.client.request(SealedCreateFinish, { uploadId: begun.uploadId });
      expect(created).toMatchObject({ state: 'PENDING', created: true });
      await expectAppError(store.service.client.request(SealedCreateFinish, { uploadId: begun.uploadId }), 'NOT_FOUND', 'UPLOAD_NOT_FOUND');
      await expectAppError(
        store.service.client.request(SealedCreateBegin, { scope, operationInstanceId: uid('op'), totalBytes: 8 * 1024 * 1024 + 1 }),
        'PAYLOAD_TOO_LARGE',
      );
      // An expired upload is collected by GC.
      const expired = await store.service.client.request(SealedCreateBegin, {
        scope: scopeOf(newSession(), 1, 'fc'),
        operationInstanceId: uid('op'),
        totalBytes: 10,
      });
      await store.pg.query(`UPDATE "${store.schema}".sealed_uploads SET expires_at = now() - interval '1 second' WHERE upload_id = $1`, [expired.uploadId]);
      expect((await store.service.client.request(SealedGc, {})).deletedUploads).toBeGreaterThanOrEqual(1);
      expect((await store.pg.query(`SELECT count(*)::int AS n FROM "${store.schema}".sealed_uploads WHERE upload_id = $1`, [expired.uploadId])).rows[0].n).toBe(
        0,
      );
    });

    it('a committed record still resolves after the service restarts on the same store', async () => {
      const scope = scopeOf(newSession(), 1, uid('fc'));
      const envelope = envelopeFor(scope.functionCallId);
      const created = await store.client.create({ scope, operationInstanceId: uid('op'), envelope });
      const key = keyOf(scope, uid('evt'), created.ref.recordId);
      await store.service.client.request(SealedCommit, { key });
      const pinned = await pinOf(store);
      await store.stop();
      store = await bootSealed(target.url, prefix);
      expect(await pinOf(store)).toEqual(pinned);
      expect((await store.client.resolve(key, pinned)).envelope).toEqual(envelope);
    }, 60_000);

    describe('bad input is rejected before any write', () => {
      it('oversize: a canonical envelope over the store limit is PAYLOAD_TOO_LARGE (server-side), and over one bus message never leaves the client', async () => {
        const scope = scopeOf(newSession(), 1, uid('fc'));
        await withStandIn(standInPrefix, { SEALED_MAX_BYTES: '65536' }, async (small) => {
          const error = await expectAppError(
            small.service.client.request(SealedCreate, { scope, operationInstanceId: uid('op'), envelope: largeEnvelope(scope.functionCallId, 70_000) }),
            'PAYLOAD_TOO_LARGE',
            'max-bytes',
          );
          expect(error.message).toContain('maxBytes');
          await expectAppError(
            small.service.client.request(SealedCreateBegin, { scope, operationInstanceId: uid('op'), totalBytes: 65537 }),
            'PAYLOAD_TOO_LARGE',
            'max-bytes',
          );
          expect(await small.countSessionRows(scope.session)).toBe(0);
          expect(await small.countRecords(scope.session)).toBe(0);
        });
        await expectAppError(
          store.service.client.request(SealedCreate, { scope, operationInstanceId: uid('op'), envelope: largeEnvelope(scope.functionCallId, 1100 * 1024) }),
          'PAYLOAD_TOO_LARGE',
        );
        expect(await store.countSessionRows(scope.session)).toBe(0);
      }, 60_000);

      it('too deep: nesting beyond 64 levels is INVALID_ARGUMENT (max-depth)', async () => {
        const scope = scopeOf(newSession(), 1, uid('fc'));
        let deep: Record<string, unknown> = { leaf: true };
        for (let i = 0; i < 70; i++) deep = { d: deep };
        await expectAppError(
          store.client.create({ scope, operationInstanceId: uid('op'), envelope: envelopeFor(scope.functionCallId, deep) }),
          'INVALID_ARGUMENT',
          'max-depth',
        );
        expect(await store.countSessionRows(scope.session)).toBe(0);
        expect(await store.countRecords(scope.session)).toBe(0);
      });

      it('non-I-JSON numbers: integers beyond ±(2^53 − 1) are INVALID_ARGUMENT (unsafe-integer), in inline and chunked creates', async () => {
        const scope = scopeOf(newSession(), 1, uid('fc'));
        await expectAppError(
          store.client.create({ scope, operationInstanceId: uid('op'), envelope: envelopeFor(scope.functionCallId, { n: 2 ** 53 }) }),
          'INVALID_ARGUMENT',
          'unsafe-integer',
        );
        const text = JSON.stringify(envelopeFor(scope.functionCallId, { n: 1 })).replace('"n":1', '"n":123456789012345678901234567890');
        await expectAppError(store.client.createChunked({ scope, operationInstanceId: uid('op') }, Buffer.from(text)), 'INVALID_ARGUMENT', 'unsafe-integer');
        await expectAppError(
          store.client.createChunked({ scope, operationInstanceId: uid('op') }, Buffer.from('{"result": nope')),
          'INVALID_ARGUMENT',
          'ENVELOPE_INVALID',
        );
        expect(await store.countRecords(scope.session)).toBe(0);
      });

      it('missing scope fields are INVALID_ARGUMENT from the contract, naming the paths', async () => {
        const scope = scopeOf(newSession(), 1, uid('fc'));
        const envelope = envelopeFor(scope.functionCallId);
        const { tenant: _tenant, ...noTenant } = scope.session;
        const cases: unknown[] = [
          { scope: { ...scope, session: noTenant }, operationInstanceId: uid('op'), envelope },
          { scope: { session: scope.session, functionCallId: scope.functionCallId }, operationInstanceId: uid('op'), envelope },
          { scope: { session: scope.session, incarnation: 1 }, operationInstanceId: uid('op'), envelope },
          { scope, envelope },
          { scope, operationInstanceId: uid('op'), envelope: { result: envelope.result } },
        ];
        for (const payload of cases) {
          const error = await expectAppError(store.service.client.send(SealedCreate.subject, payload), 'INVALID_ARGUMENT');
          expect(error.details?.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.any(String) })]));
        }
        const { eventId: _eventId, ...noEvent } = keyOf(scope, 'evt', 'A'.repeat(22));
        await expectAppError(store.service.client.send(SealedResolve.subject, { key: noEvent }), 'INVALID_ARGUMENT');
        await expectAppError(
          store.client.create({ scope, operationInstanceId: uid('op'), envelope: envelopeFor('another-call') }),
          'INVALID_ARGUMENT',
          'CORRELATION_MISMATCH',
        );
        expect(await store.countSessionRows(scope.session)).toBe(0);
        expect(await store.countRecords(scope.session)).toBe(0);
      });
    });
  });
});
