import fc from 'fast-check';
import { AppHostError, LifecycleAppendEvents, LifecycleCreateSession, LifecycleDeleteSession, LifecycleGetSession, type SessionKey } from '@apphost/contracts';
import { describeOnPostgres } from '@apphost/testing';
import type { LifecycleFaultPoint } from '../lifecycle.faults';
import { LifecycleHarness } from '../testing/lifecycle-harness';

/**
 * Model-based test (§5 rows 3-4 of the reliability matrix): random sequences of creates, deletes, appends (current and
 * stale incarnations), crashes at fault points with and without a process restart, and plain restarts, against a
 * model. After every command the service's answer matches the model, incarnations never decrease, and at the end of
 * each run the database (records, session rows, event counts) equals the model.
 */
type ModelSession = { state: 'ABSENT' | 'ACTIVE' | 'DELETED'; incarnation: number; events: number; maxSeen: number };
type Model = { sessions: ModelSession[] };
type Real = { h: LifecycleHarness; keys: SessionKey[]; ops: number };

const SESSIONS = 3;
const CREATE_CRASHES: LifecycleFaultPoint[] = [
  'create.before-reservation',
  'create.after-reservation',
  'create.after-import-finalization',
  'create.before-session-commit',
  'create.after-session-commit',
  'create.after-activation',
];
const DELETE_CRASHES: LifecycleFaultPoint[] = ['delete.after-deleting', 'delete.before-session-purge', 'delete.after-session-purge', 'delete.before-deleted'];

async function settle<T>(p: Promise<T>): Promise<T | AppHostError> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof AppHostError) return e;
    throw e;
  }
}

function observe(m: ModelSession, incarnation: number): void {
  expect(incarnation).toBeGreaterThanOrEqual(m.maxSeen); // monotonic across everything the service ever said
  m.maxSeen = incarnation;
}

class CreateCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly i: number,
    readonly crash: LifecycleFaultPoint | null,
    readonly restart: boolean,
  ) {}
  check(m: Readonly<Model>) {
    return this.crash === null || m.sessions[this.i].state !== 'ACTIVE';
  }
  async run(m: Model, r: Real) {
    const s = m.sessions[this.i];
    const req = { session: r.keys[this.i], creationOperationId: `op-${++r.ops}` };
    if (this.crash) {
      r.h.faults.arm(this.crash);
      const crashed = await settle(r.h.client.request(LifecycleCreateSession, req));
      expect(crashed).toMatchObject({ code: 'INTERNAL' });
      if (this.restart) await r.h.restart();
    }
    const result = await settle(r.h.client.request(LifecycleCreateSession, req));
    if (s.state === 'ACTIVE') {
      expect(result).toMatchObject({ code: 'CONFLICT', details: { reason: 'ALREADY_EXISTS' } });
      return;
    }
    const incarnation = s.state === 'ABSENT' ? 1 : s.incarnation + 1;
    expect(result).toMatchObject({ state: 'ACTIVE', incarnation });
    Object.assign(s, { state: 'ACTIVE', incarnation, events: 0 });
    observe(s, incarnation);
  }
  toString() {
    return `create(${this.i}${this.crash ? `, crash@${this.crash}${this.restart ? '+restart' : ''}` : ''})`;
  }
}

class DeleteCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly i: number,
    readonly crash: LifecycleFaultPoint | null,
    readonly restart: boolean,
  ) {}
  check(m: Readonly<Model>) {
    return this.crash === null || m.sessions[this.i].state === 'ACTIVE';
  }
  async run(m: Model, r: Real) {
    const s = m.sessions[this.i];
    const req = { session: r.keys[this.i] };
    if (this.crash) {
      r.h.faults.arm(this.crash);
      expect(await settle(r.h.client.request(LifecycleDeleteSession, req))).toMatchObject({ code: 'INTERNAL' });
      if (this.restart) await r.h.restart();
    }
    const result = await settle(r.h.client.request(LifecycleDeleteSession, req));
    if (s.state === 'ABSENT') {
      expect(result).toMatchObject({ code: 'NOT_FOUND' });
      return;
    }
    expect(result).toMatchObject({ state: 'DELETED', incarnation: s.incarnation });
    Object.assign(s, { state: 'DELETED', events: 0 });
    observe(s, s.incarnation);
  }
  toString() {
    return `delete(${this.i}${this.crash ? `, crash@${this.crash}${this.restart ? '+restart' : ''}` : ''})`;
  }
}

class AppendCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly i: number,
    readonly count: number,
    readonly stale: boolean,
  ) {}
  check() {
    return true;
  }
  async run(m: Model, r: Real) {
    const s = m.sessions[this.i];
    const incarnation = this.stale ? Math.max(1, s.incarnation - 1) : Math.max(1, s.incarnation);
    const events = Array.from({ length: this.count }, (_, k) => ({ author: 'model', content: { k } }));
    const result = await settle(r.h.client.request(LifecycleAppendEvents, { session: r.keys[this.i], incarnation, provenance: { path: 'user-turn' }, events }));
    if (s.state === 'ABSENT') {
      expect(result).toMatchObject({ code: 'NOT_FOUND' });
    } else if (s.state === 'DELETED' || incarnation !== s.incarnation) {
      expect(result).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'STALE_INCARNATION' } });
    } else {
      expect(result).toEqual({ incarnation, eventIds: Array.from({ length: this.count }, (_, k) => s.events + k + 1) });
      s.events += this.count;
    }
  }
  toString() {
    return `append(${this.i}, ${this.count}${this.stale ? ', stale' : ''})`;
  }
}

class GetCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly i: number) {}
  check() {
    return true;
  }
  async run(m: Model, r: Real) {
    const s = m.sessions[this.i];
    const result = await settle(r.h.client.request(LifecycleGetSession, { session: r.keys[this.i] }));
    if (s.state === 'ABSENT') expect(result).toMatchObject({ code: 'NOT_FOUND' });
    else {
      expect(result).toMatchObject({ state: s.state, incarnation: s.incarnation });
      observe(s, s.incarnation);
    }
  }
  toString() {
    return `get(${this.i})`;
  }
}

class RestartCommand implements fc.AsyncCommand<Model, Real> {
  check() {
    return true;
  }
  async run(_m: Model, r: Real) {
    await r.h.restart();
  }
  toString() {
    return 'restart';
  }
}

/** The database equals the model: record state and incarnation, session rows only while ACTIVE, event counts. */
async function assertDatabaseMatches(m: Model, r: Real): Promise<void> {
  for (let i = 0; i < SESSIONS; i++) {
    const s = m.sessions[i];
    const record = await r.h.record(r.keys[i]);
    if (s.state === 'ABSENT') {
      expect(record).toBeUndefined();
      continue;
    }
    expect(record).toMatchObject({ state: s.state, incarnation: s.incarnation });
    expect(await r.h.sessionRows(r.keys[i])).toHaveLength(s.state === 'ACTIVE' ? 1 : 0);
    const events = await r.h.eventRows(r.keys[i]);
    expect(events).toHaveLength(s.events);
    expect(events.every((e) => e.incarnation === s.incarnation)).toBe(true);
  }
}

const index = fc.integer({ min: 0, max: SESSIONS - 1 });
const commands = [
  fc.tuple(index, fc.option(fc.constantFrom(...CREATE_CRASHES), { freq: 3 }), fc.boolean()).map(([i, c, re]) => new CreateCommand(i, c, re)),
  fc.tuple(index, fc.option(fc.constantFrom(...DELETE_CRASHES), { freq: 3 }), fc.boolean()).map(([i, c, re]) => new DeleteCommand(i, c, re)),
  fc.tuple(index, fc.integer({ min: 1, max: 3 }), fc.boolean()).map(([i, n, stale]) => new AppendCommand(i, n, stale)),
  index.map((i) => new GetCommand(i)),
  fc.constant(new RestartCommand()),
];

describeOnPostgres('lifecycle-store model-based', (target) => {
  describe('through the bus, with restarts', () => {
    const h = new LifecycleHarness(target);

    beforeAll(() => h.start(), 60_000);
    afterEach(() => h.faults.disarm());
    afterAll(async () => {
      await h.stop();
      await h.cleanup();
    });

    it('random lifecycles with crashes and restarts: incarnations stay monotonic and the database matches the model', async () => {
      expect.hasAssertions();
      await fc.assert(
        fc.asyncProperty(fc.commands(commands, { maxCommands: 16 }), async (cmds) => {
          h.faults.disarm();
          const real: Real = { h, keys: Array.from({ length: SESSIONS }, () => h.key('m')), ops: 0 };
          const model: Model = { sessions: Array.from({ length: SESSIONS }, () => ({ state: 'ABSENT' as const, incarnation: 0, events: 0, maxSeen: 0 })) };
          await fc.asyncModelRun(() => ({ model, real }), cmds);
          await assertDatabaseMatches(model, real);
        }),
        { numRuns: 25, endOnFailure: true },
      );
    }, 120_000);
  });
});
