import Redis from 'ioredis';
import { canonicalDigest } from '@apphost/canonical-json';
import { AppHostError, GovernedDecideConfirmation, GovernedPurge, GovernedRevoke, GovernedRunToolBatch, type RunToolBatchResponse } from '@apphost/contracts';
import { descriptors, eventually, TEST_REDIS_URL } from '@apphost/testing';
import { principal, session, startFakePlane, type FakePlane, type FakeState } from '../test/fake-plane';
import { ConfirmationGate, REQUEST_CONFIRMATION_TOOL } from './confirmation-gate';
import { ConfirmationPermits } from './confirmation-permits';

const TTL_MS = 3_000;

describe('governed-operations sealed confirmation permits (fake collaborators on a private NATS)', () => {
  let plane: FakePlane;
  let state: FakeState;
  let evaluations: jest.SpyInstance;
  let clock: jest.SpyInstance<number, []>;
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });

  beforeAll(async () => {
    plane = await startFakePlane({ GOVERNED_CONFIRMATION_TTL_MS: String(TTL_MS) });
    state = plane.state;
    evaluations = jest.spyOn(plane.service.running.app.get(ConfirmationGate), 'holds');
    clock = jest.spyOn(plane.service.running.app.get(ConfirmationPermits), 'now');
    await redis.connect();
  }, 60_000);

  afterAll(async () => {
    await plane?.stop();
    redis.disconnect();
  });

  beforeEach(async () => {
    await plane.reset();
    evaluations.mockClear();
    clock.mockRestore();
    clock = jest.spyOn(plane.service.running.app.get(ConfirmationPermits), 'now');
  });

  /** The Redis keys holding the permit `confirmationId` (ids are random, so the pattern is this permit's alone). */
  const permitKeys = (confirmationId: string) => redis.keys(`*confirmation:*:${confirmationId}`);

  const run = (calls: { functionCallId?: string; tool: string; arguments?: Record<string, unknown> }[]) =>
    plane.service.client.request(GovernedRunToolBatch, { principal, session, invocationId: 'inv', calls }, { timeoutMs: 20_000 });
  const decide = (confirmationId: string, confirmed: boolean, key = session) =>
    plane.service.client.request(GovernedDecideConfirmation, { principal, session: key, confirmationId, confirmed }, { timeoutMs: 20_000 });
  const held = async (args: Record<string, unknown> = { amount: 5 }, functionCallId = 'g'): Promise<RunToolBatchResponse> => {
    const res = await run([{ functionCallId, tool: 'guarded', arguments: args }]);
    expect(res.confirmations).toHaveLength(1);
    state.log.length = 0;
    return res;
  };

  it('a held call does not run; its siblings do; the event asks for confirmation (adk_request_confirmation) and the policy ran once per call', async () => {
    const res = await run([
      { functionCallId: 'g', tool: 'guarded', arguments: { amount: 5 } },
      { functionCallId: 'u', tool: 'unguarded' },
    ]);
    expect(evaluations).toHaveBeenCalledTimes(2);
    expect(state.log.filter((l) => l.startsWith('call:'))).toEqual(['call:unguarded']);
    expect(state.created.map((c) => c.scope.functionCallId)).toEqual(['u']);
    expect(res.functionResponses.map((r) => [r.functionCallId, (r.response.error as { code?: string } | undefined)?.code ?? 'ran'])).toEqual([
      ['g', 'CONFIRMATION_REQUIRED'],
      ['u', 'ran'],
    ]);
    expect(res.confirmations).toEqual([
      {
        confirmationId: expect.stringMatching(/^cf-[0-9a-f]{32}$/),
        functionCallId: 'g',
        tool: 'guarded',
        arguments: { amount: 5 },
        argumentsDigest: canonicalDigest('confirmation-arguments', { amount: 5 }),
        expiresAt: expect.any(String),
      },
    ]);
    expect(state.appended[0].functionCalls).toEqual([
      {
        id: res.confirmations[0].confirmationId,
        name: REQUEST_CONFIRMATION_TOOL,
        args: {
          originalFunctionCall: { id: 'g', name: 'guarded', args: { amount: 5 } },
          toolConfirmation: { hint: expect.any(String), confirmed: false },
          expiresAt: res.confirmations[0].expiresAt,
        },
      },
    ]);
  });

  it('approved: the sealed arguments run exactly once, with no second policy evaluation; the event carries the original call id; a second decision is NOT_FOUND', async () => {
    const res = await held({ amount: 5, note: 'exact' });
    const decided = await decide(res.confirmations[0].confirmationId, true);
    expect(evaluations).toHaveBeenCalledTimes(1); // at admission only
    expect(state.log.filter((l) => l.startsWith('call:'))).toEqual(['call:guarded']);
    expect(state.callArgs).toEqual([{ amount: 5, note: 'exact' }]);
    expect(decided.functionResponses).toEqual([{ functionCallId: 'g', name: 'guarded', response: { content: [{ type: 'text', text: 'guarded ran' }] } }]);
    expect(descriptors(decided).map((w) => [w.correlation.functionCallId, w.bindingRevision])).toEqual([['g', 'v1.k1.abcd']]);
    await eventually(async () => state.committed.length > 0, 5_000); // committed after the reply
    expect(state.committed.map((c) => [c.key.functionCallId, c.key.eventId])).toEqual([['g', String(decided.eventId)]]);
    expect(decided.eventId).toBeGreaterThan(res.eventId);

    await expect(decide(res.confirmations[0].confirmationId, true)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(state.log.filter((l) => l.startsWith('call:'))).toEqual(['call:guarded']);
  });

  it('two concurrent approvals: exactly one runs the call', async () => {
    const res = await held();
    const outcomes = await Promise.allSettled([decide(res.confirmations[0].confirmationId, true), decide(res.confirmations[0].confirmationId, true)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(state.log.filter((l) => l.startsWith('call:'))).toEqual(['call:guarded']);
  });

  it('denied: nothing runs; the model gets CONFIRMATION_DENIED for the original id', async () => {
    const res = await held();
    const decided = await decide(res.confirmations[0].confirmationId, false);
    expect(decided.functionResponses).toEqual([
      { functionCallId: 'g', name: 'guarded', response: { error: { code: 'CONFIRMATION_DENIED', message: expect.any(String) } } },
    ]);
    expect(state.log).toEqual(['get-session', 'append']);
  });

  it('a binding revision that changed since the permit: fails closed with CONFIRMATION_STALE, nothing runs', async () => {
    const res = await held();
    state.revisions.careful = 'v1.k2.ffff';
    const decided = await decide(res.confirmations[0].confirmationId, true);
    expect(decided.functionResponses[0].response).toEqual({ error: { code: 'CONFIRMATION_STALE', message: expect.stringMatching(/binding changed/) } });
    expect(state.log.filter((l) => l.startsWith('call:') || l.startsWith('seal:'))).toEqual([]);
  });

  it("another session's decision finds nothing and does not burn the permit; a recreated session never runs it", async () => {
    const res = await held();
    const id = res.confirmations[0].confirmationId;
    await expect(decide(id, true, { ...session, sessionId: 's2' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    state.incarnation = 4; // deleted and recreated since the permit was issued
    await expect(decide(id, true)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(state.log.filter((l) => l.startsWith('call:') || l === 'append')).toEqual([]);
  });

  it("expired: nothing runs; the model gets CONFIRMATION_EXPIRED (the permits' clock is advanced to the expiry)", async () => {
    const issuedAt = Date.now();
    clock.mockReturnValue(issuedAt);
    const res = await held();
    expect(res.confirmations[0].expiresAt).toBe(new Date(issuedAt + TTL_MS).toISOString());
    clock.mockReturnValue(issuedAt + TTL_MS);
    const decided = await decide(res.confirmations[0].confirmationId, true);
    expect(decided.functionResponses[0].response).toEqual({ error: { code: 'CONFIRMATION_EXPIRED', message: expect.any(String) } });
    expect(state.log.filter((l) => l.startsWith('call:'))).toEqual([]);
  });

  it('a millisecond before expiry the approved call still runs', async () => {
    const issuedAt = Date.now();
    clock.mockReturnValue(issuedAt);
    const res = await held();
    clock.mockReturnValue(issuedAt + TTL_MS - 1);
    const decided = await decide(res.confirmations[0].confirmationId, true);
    expect(decided.functionResponses[0].response).toEqual({ content: [{ type: 'text', text: 'guarded ran' }] });
    expect(state.log.filter((l) => l.startsWith('call:'))).toEqual(['call:guarded']);
  });

  it("the deletion cascade: revoke makes the incarnation's permits undecidable, purge deletes them from Redis; a later incarnation's permit is untouched", async () => {
    const first = (await held({ amount: 1 }, 'g1')).confirmations[0].confirmationId;
    const second = (await held({ amount: 2 }, 'g2')).confirmations[0].confirmationId;
    state.incarnation = 4;
    const later = (await held({ amount: 4 })).confirmations[0].confirmationId;
    for (const id of [first, second, later]) expect(await permitKeys(id)).toHaveLength(1);

    await expect(plane.service.client.request(GovernedRevoke, { session, incarnation: 3 })).resolves.toEqual({ done: true });
    state.incarnation = 3; // so the decision below is refused by the revocation alone, not by the incarnation check
    await expect(decide(first, true)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await permitKeys(first)).toHaveLength(1); // revoked, not yet purged
    expect(state.log.filter((l) => l.startsWith('call:') || l === 'append')).toEqual([]);

    await expect(plane.service.client.request(GovernedPurge, { session, incarnation: 3 })).resolves.toEqual({ done: true });
    expect(await permitKeys(first)).toEqual([]);
    expect(await permitKeys(second)).toEqual([]);
    expect(await permitKeys(later)).toHaveLength(1);
    // Repeated steps are harmless, and what they removed stays removed.
    for (const contract of [GovernedRevoke, GovernedPurge])
      await expect(plane.service.client.request(contract, { session, incarnation: 3 })).resolves.toEqual({ done: true });
    await expect(decide(second, true)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    state.incarnation = 4;
    await expect(decide(later, true)).resolves.toMatchObject({
      incarnation: 4,
      functionResponses: [{ functionCallId: 'g', response: { content: [{ type: 'text', text: 'guarded ran' }] } }],
    });
    expect(state.callArgs).toEqual([{ amount: 4 }]);
  });

  it('a permit that cannot be stored (coordination store down) fails the batch before any call runs', async () => {
    const permits = plane.service.running.app.get(ConfirmationPermits);
    jest.spyOn(permits, 'put').mockRejectedValueOnce(new AppHostError('UNAVAILABLE', 'coordination store unavailable'));
    await expect(
      run([
        { functionCallId: 'g', tool: 'guarded' },
        { functionCallId: 'u', tool: 'unguarded' },
      ]),
    ).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(state.log.filter((l) => l.startsWith('call:') || l.startsWith('seal:') || l === 'append')).toEqual([]);
  });

  it('refuses a malformed confirmation id before any effect', async () => {
    await expect(decide('cf-not-hex', true)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(state.log).toEqual([]);
  });
});
