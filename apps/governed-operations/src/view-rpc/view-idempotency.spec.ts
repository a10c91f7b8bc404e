import { RedisCoordinationStore } from '@apphost/coordination';
import { eventually, expectAppError, sleep, TEST_REDIS_URL, uniquePrefix } from '@apphost/testing';
import type { IdempotencyScope, IdempotencyTicket, RetainedOutcome } from './ports';
import { ViewIdempotency } from './view-idempotency';

/** Retained View operation outcomes by idempotency key, on real Redis, with two instances as two replicas. */
jest.setTimeout(30_000);

const keyPrefix = `apphost:${uniquePrefix()}view-idempotency-spec:`;
let stores: RedisCoordinationStore[];
let a: ViewIdempotency;
let b: ViewIdempotency;

beforeAll(async () => {
  stores = await Promise.all(['a', 'b'].map((name) => RedisCoordinationStore.connect({ url: TEST_REDIS_URL, keyPrefix, name: `view-idempotency-${name}` })));
  a = new ViewIdempotency(stores[0], { claimMarginMs: 200 });
  b = new ViewIdempotency(stores[1], { claimMarginMs: 200 });
});

afterAll(async () => {
  await Promise.all((stores ?? []).map((s) => s.close()));
});

let views = 0;
/** The namespace of one fresh View (every test gets its own, so keys never meet across tests). */
function scopeOf(overrides: Partial<IdempotencyScope> = {}): IdempotencyScope {
  return {
    principalDigest: 'f'.repeat(64),
    viewId: `vw-${(++views).toString(16).padStart(32, '0')}`,
    toolsetId: 'ts',
    bindingRevision: 'rev-1',
    session: { tenant: 'acme', appName: 'app', userId: 'alice', sessionId: 's1' },
    incarnation: 1,
    generationId: '00000000-0000-4000-8000-000000000001',
    policyRevision: null,
    ...overrides,
  };
}
const soon = (ms = 10_000) => Date.now() + ms;
const HOUR = 3600_000;
const POLL = 'tools/call|srv|poll-system-stats|args-digest-1';
const result = (n: number): RetainedOutcome => ({ kind: 'result', result: { content: [{ type: 'text', text: `run ${n}` }], structuredContent: { n } } });

function executing(ticket: IdempotencyTicket): Extract<IdempotencyTicket, { kind: 'execute' }> {
  if (ticket.kind !== 'execute') throw new Error(`expected execute, got ${ticket.kind}`);
  return ticket;
}

/** The store keys this spec's instances wrote (one per idempotency record). */
const recordKeys = () => stores[0].keysWithPrefix('view-rpc-idem:');

describe('ViewIdempotency', () => {
  it('runs once under concurrent duplicates on two replicas; the duplicates wait and all get its one outcome', async () => {
    const scope = scopeOf();
    const answers: IdempotencyTicket[] = [];
    const begins = Array.from({ length: 10 }, (_, i) =>
      (i % 2 ? a : b).begin(scope, 'k-1', POLL, HOUR, soon()).then((t) => {
        answers.push(t);
        return t;
      }),
    );
    const first = executing(await eventually(async () => answers.find((t) => t.kind === 'execute'), 10_000, 5));
    await sleep(150);
    // While the first use runs, no duplicate has answered: they wait, and none of them runs.
    expect(answers).toHaveLength(1);
    await first.complete(result(1));
    const tickets = await Promise.all(begins);
    expect(tickets.filter((t) => t.kind === 'execute')).toHaveLength(1);
    expect(tickets.filter((t) => t.kind === 'retained')).toEqual(Array(9).fill({ kind: 'retained', outcome: result(1) }));
  });

  it('a completed key answers its retained outcome (result or error) on any replica, and never runs again', async () => {
    const scope = scopeOf();
    await executing(await a.begin(scope, 'ok', POLL, HOUR, soon())).complete(result(2));
    expect(await b.begin(scope, 'ok', POLL, HOUR, soon())).toEqual({ kind: 'retained', outcome: result(2) });
    expect(await a.begin(scope, 'ok', POLL, HOUR, soon())).toEqual({ kind: 'retained', outcome: result(2) });

    const failed: RetainedOutcome = {
      kind: 'error',
      error: { code: 'FAILED_PRECONDITION', message: 'tool failed', retryable: false, details: { reason: 'X' } },
    };
    await executing(await b.begin(scope, 'err', POLL, HOUR, soon())).complete(failed);
    expect(await a.begin(scope, 'err', POLL, HOUR, soon())).toEqual({ kind: 'retained', outcome: failed });
  });

  it('the same key for another identity conflicts, in flight or completed; another namespace is another key', async () => {
    const scope = scopeOf();
    const first = executing(await a.begin(scope, 'k', POLL, HOUR, soon()));
    const conflict = { code: 'CONFLICT', details: { reason: 'IDEMPOTENCY_KEY_CONFLICT' } };
    expect(await expectAppError(b.begin(scope, 'k', 'resources/read|ui://srv/other', HOUR, soon()))).toMatchObject(conflict);
    await first.complete(result(3));
    expect(await expectAppError(b.begin(scope, 'k', 'tools/call|srv|poll-system-stats|args-digest-2', HOUR, soon()))).toMatchObject(conflict);
    // The key is unique only within its namespace: another View or generation runs on its own.
    for (const other of [scopeOf(), { ...scope, generationId: '00000000-0000-4000-8000-000000000002' }])
      expect((await b.begin(other, 'k', POLL, HOUR, soon())).kind).toBe('execute');
  });

  it('a call and a read under one key meet: the policy revision is not part of the key, so they conflict', async () => {
    const scope = scopeOf();
    const READ = 'resources/read|ui://srv/doc';
    await executing(await a.begin(scope, 'both', POLL, HOUR, soon())).complete(result(20));
    // The service gives reads a policy revision and calls none: still one record, another identity.
    await expectAppError(b.begin({ ...scope, policyRevision: '1/1' }, 'both', READ, HOUR, soon()), 'CONFLICT', 'IDEMPOTENCY_KEY_CONFLICT');
    const read = executing(await b.begin({ ...scope, policyRevision: '1/1' }, 'read-first', READ, HOUR, soon()));
    await expectAppError(a.begin(scope, 'read-first', POLL, HOUR, soon()), 'CONFLICT', 'IDEMPOTENCY_KEY_CONFLICT');
    await read.complete(result(21));
    await expectAppError(a.begin(scope, 'read-first', POLL, HOUR, soon()), 'CONFLICT', 'IDEMPOTENCY_KEY_CONFLICT');
  });

  it('an outcome retained under another policy revision is stale: the next use takes the key over and runs, once', async () => {
    const scope = scopeOf({ policyRevision: '1/1' });
    const READ = 'resources/read|ui://srv/doc';
    await executing(await a.begin(scope, 'r', READ, HOUR, soon())).complete(result(22));
    expect(await b.begin(scope, 'r', READ, HOUR, soon())).toEqual({ kind: 'retained', outcome: result(22) });
    const revised = { ...scope, policyRevision: '2/1' };
    // Two replicas find the stale outcome at once: one takes it over (compare-and-set) and runs, the other waits for it.
    const answers: IdempotencyTicket[] = [];
    const begins = [a, b].map((replica) => replica.begin(revised, 'r', READ, HOUR, soon()).then((t) => (answers.push(t), t)));
    const first = executing(await eventually(async () => answers.find((t) => t.kind === 'execute'), 10_000, 5));
    await sleep(100);
    expect(answers).toHaveLength(1);
    await first.complete(result(23));
    expect((await Promise.all(begins)).map((t) => t.kind).sort()).toEqual(['execute', 'retained']);
    expect(await b.begin(revised, 'r', READ, HOUR, soon())).toEqual({ kind: 'retained', outcome: result(23) });
  });

  it('an outcome can be retained shorter than the profile says (a read ttlMs), or not at all (0)', async () => {
    const scope = scopeOf({ policyRevision: '1/1' });
    const READ = 'resources/read|ui://srv/doc';
    await executing(await a.begin(scope, 'ttl0', READ, HOUR, soon())).complete(result(24), 0);
    const again = executing(await b.begin(scope, 'ttl0', READ, HOUR, soon()));
    await again.complete(result(25), 300);
    expect(await a.begin(scope, 'ttl0', READ, HOUR, soon())).toEqual({ kind: 'retained', outcome: result(25) });
    await sleep(400);
    expect((await a.begin(scope, 'ttl0', READ, HOUR, soon())).kind).toBe('execute');
  });

  it('an expired outcome is forgotten: the key runs again', async () => {
    const scope = scopeOf();
    await executing(await a.begin(scope, 'short', POLL, 1000, soon())).complete(result(4));
    expect(await b.begin(scope, 'short', POLL, 1000, soon())).toEqual({ kind: 'retained', outcome: result(4) });
    await sleep(1100);
    const again = executing(await b.begin(scope, 'short', POLL, 1000, soon()));
    await again.complete(result(5));
    expect(await a.begin(scope, 'short', POLL, HOUR, soon())).toEqual({ kind: 'retained', outcome: result(5) });
  });

  it('a duplicate of a first use still in flight at its deadline is OUTCOME_UNKNOWN (not retryable), having run nothing', async () => {
    const scope = scopeOf();
    const first = executing(await a.begin(scope, 'slow', POLL, HOUR, soon()));
    const started = Date.now();
    const error = await expectAppError(b.begin(scope, 'slow', POLL, HOUR, Date.now() + 300), 'OUTCOME_UNKNOWN', 'CALL_IN_FLIGHT');
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/still in flight/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    await first.complete(result(6));
    expect(await b.begin(scope, 'slow', POLL, HOUR, soon())).toEqual({ kind: 'retained', outcome: result(6) });
  });

  it('the claim of a crashed replica lapses after its deadline: the waiting duplicate runs; the late first use never overwrites it', async () => {
    const scope = scopeOf();
    // Replica a claims with a 300 ms deadline (+200 ms margin) and dies: it never completes nor abandons.
    const crashed = executing(await a.begin(scope, 'crash', POLL, HOUR, Date.now() + 300));
    const takeover = executing(await b.begin(scope, 'crash', POLL, HOUR, soon()));
    // A first use that was only slow, not dead, finds its claim taken over: its late outcome does not replace the new one.
    await crashed.complete(result(7));
    await takeover.complete(result(8));
    expect(await a.begin(scope, 'crash', POLL, HOUR, soon())).toEqual({ kind: 'retained', outcome: result(8) });
  });

  it('abandon frees the key for the next use (nothing ran); it never removes another use claim', async () => {
    const scope = scopeOf();
    await executing(await a.begin(scope, 'gone', POLL, HOUR, soon())).abandon();
    const second = executing(await b.begin(scope, 'gone', POLL, HOUR, Date.now() + 200));
    await sleep(450); // its claim lapses (deadline + margin) ...
    const third = executing(await a.begin(scope, 'gone', POLL, HOUR, soon()));
    await second.abandon(); // ... so abandoning it leaves the third use's claim alone
    await expectAppError(b.begin(scope, 'gone', POLL, HOUR, Date.now() + 100), 'OUTCOME_UNKNOWN', 'CALL_IN_FLIGHT');
    await third.complete(result(9));
    await third.complete(result(10)); // once only
    expect(await b.begin(scope, 'gone', POLL, HOUR, soon())).toEqual({ kind: 'retained', outcome: result(9) });
  });

  it('an outcome too large to retain leaves a marker: later uses get IDEMPOTENT_OUTCOME_NOT_RETAINED, never a re-run', async () => {
    const scope = scopeOf();
    const big: RetainedOutcome = { kind: 'result', result: { content: [{ type: 'text', text: 'x'.repeat(1024 * 1024) }] } };
    await executing(await a.begin(scope, 'big', POLL, HOUR, soon())).complete(big);
    for (const replica of [a, b])
      await expectAppError(replica.begin(scope, 'big', POLL, HOUR, soon()), 'FAILED_PRECONDITION', 'IDEMPOTENT_OUTCOME_NOT_RETAINED');
    // The identity is still checked first.
    await expectAppError(b.begin(scope, 'big', 'other', HOUR, soon()), 'CONFLICT', 'IDEMPOTENCY_KEY_CONFLICT');
  });

  it('keys and records carry digests only; a record of another shape answers IDEMPOTENT_OUTCOME_NOT_RETAINED', async () => {
    const scope = scopeOf({ principalDigest: 'a'.repeat(64) });
    const before = new Set(await recordKeys());
    const first = executing(await a.begin(scope, 'shape', POLL, HOUR, soon()));
    const [key] = (await recordKeys()).filter((k) => !before.has(k));
    expect(key).toMatch(/^view-rpc-idem:[0-9a-f]{64}$/);
    const claim = (await stores[0].get(key)) as string;
    for (const secret of ['alice', 'acme', 'a'.repeat(64), 'poll-system-stats', scope.viewId]) expect(claim).not.toContain(secret);
    await first.complete(result(11));
    expect(await stores[0].get(key)).not.toContain('poll-system-stats');

    await stores[0].compareAndSet(key, (await stores[0].get(key)) as string, JSON.stringify({ v: 2, state: 'complete' }), 60_000);
    await expectAppError(b.begin(scope, 'shape', POLL, HOUR, soon()), 'FAILED_PRECONDITION', 'IDEMPOTENT_OUTCOME_NOT_RETAINED');
    await stores[0].compareAndSet(key, (await stores[0].get(key)) as string, 'not json', 60_000);
    await expectAppError(b.begin(scope, 'shape', POLL, HOUR, soon()), 'FAILED_PRECONDITION', 'IDEMPOTENT_OUTCOME_NOT_RETAINED');
  });

  it('retention beyond the store limit is capped (24 h), never rejected after the operation ran', async () => {
    const scope = scopeOf();
    await executing(await a.begin(scope, 'week', POLL, 7 * 24 * HOUR, soon())).complete(result(12));
    expect(await b.begin(scope, 'week', POLL, 7 * 24 * HOUR, soon())).toEqual({ kind: 'retained', outcome: result(12) });
    await expectAppError(a.begin(scope, 'zero', POLL, 0, soon()), 'INVALID_ARGUMENT');
  });
});
