import { eventually, sleep } from '@apphost/testing';
import { loadServiceDefinitions } from '../plane/services';
import { faultSuite } from './fault-suite';
import { FAULT_CODES, underFault } from './under-fault';

/** SIGKILL of each of the seven service processes, idle and mid-flight; the launcher restarts it as a pod would be. */
jest.setTimeout(90_000);

describe('fault suite: SIGKILL of a service', () => {
  const suite = faultSuite('service-kills');

  it.each(loadServiceDefinitions().map((d) => d.name))('SIGKILL of %s while idle', async (name) => {
    const outcome = await underFault(
      suite.plane,
      suite.rows,
      `SIGKILL ${name} (idle)`,
      { allowedCodes: FAULT_CODES, noReplyAllowed: name === 'gateway' },
      async () => {
        await suite.plane.kill(name);
        await suite.plane.restarted(name);
      },
    );
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });

  it('SIGKILL of governed-operations mid-batch: the retry is told at once the outcome is unknown, and does not run it again', async () => {
    const sessionId = `kill-batch-${Date.now()}`;
    expect((await suite.plane.flow.openSession(sessionId)).status).toBe(201);
    suite.plane.sessions.add(sessionId);
    const key = `${sessionId}/inv-slow/call-1`;
    let settled: unknown;
    const send = () =>
      suite.plane.call((flow) => flow.batch(sessionId, 'inv-slow', [{ functionCallId: 'call-1', tool: 'record', arguments: { key, delayMs: 1500 } }]));
    const outcome = await underFault(suite.plane, suite.rows, 'SIGKILL governed-operations (mid-batch)', { allowedCodes: FAULT_CODES }, async () => {
      const inFlight = send();
      await eventually(async () => suite.plane.executions().has(key), 10_000, 20);
      await suite.plane.kill('governed-operations');
      await inFlight;
      await suite.plane.restarted('governed-operations');
      // The runtime retries the same invocation and call id until it gets an answer: the tool had started when its
      // owner died, so the answer is OUTCOME_UNKNOWN (EXECUTED_NOT_RECORDED), not a wait until the deadline.
      settled = await eventually(
        async () => {
          const reply = await send();
          return reply.status === 504 ? reply : undefined;
        },
        30_000,
        500,
      );
    });
    expect(settled).toMatchObject({ body: { error: { code: 'OUTCOME_UNKNOWN', retryable: false, details: { reason: 'EXECUTED_NOT_RECORDED' } } } });
    expect(suite.plane.executions().get(key)).toBe(1);
    expect(outcome).toEqual({ fault: outcome.fault, codes: outcome.codes, recoveredMs: expect.any(Number), lost: [] });
  });

  it('SIGKILL of lifecycle-store mid-create: every session asked for exists once the store is back', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `kill-create-${Date.now()}-${i}`);
    ids.forEach((id) => suite.plane.sessions.add(id));
    // Each create carries its idempotency key (creationOperationId), as a runtime that retries does: the retry with
    // the same key completes the interrupted creation instead of waiting out the dead creator's lease.
    const opOf = (id: string) => `op-${id}`;
    const outcome = await underFault(suite.plane, suite.rows, 'SIGKILL lifecycle-store (mid-create)', { allowedCodes: FAULT_CODES }, async () => {
      const creates = ids.map((id) => suite.plane.call((flow) => flow.openSession(id, opOf(id))));
      await sleep(30);
      await suite.plane.kill('lifecycle-store');
      await Promise.all(creates);
      await suite.plane.restarted('lifecycle-store');
      for (const id of ids)
        await eventually(async () => ((await suite.plane.call((flow) => flow.openSession(id, opOf(id)))).status === 201 ? true : undefined), 30_000, 500);
    });
    for (const id of ids)
      expect((await suite.plane.flow.request('GET', `/v1/sessions/${id}?appName=demo`)).body).toMatchObject({ sessionId: id, state: 'ACTIVE' });
    expect(outcome.lost).toEqual([]);
  });

  it('SIGKILL of sealed-result-store mid-delete: the retried delete completes the cascade', async () => {
    const ids = Array.from({ length: 4 }, (_, i) => `kill-delete-${Date.now()}-${i}`);
    for (const id of ids) {
      expect((await suite.plane.flow.openSession(id)).status).toBe(201);
      expect((await suite.plane.flow.batch(id, 'inv-1', [{ functionCallId: 'call-1', tool: 'get-time', arguments: {} }])).status).toBe(200);
    }
    const outcome = await underFault(suite.plane, suite.rows, 'SIGKILL sealed-result-store (mid-delete)', { allowedCodes: FAULT_CODES }, async () => {
      const deletes = ids.map((id) => suite.plane.call((flow) => flow.deleteSession(id)));
      await sleep(30);
      await suite.plane.kill('sealed-result-store');
      await Promise.all(deletes);
      await suite.plane.restarted('sealed-result-store');
      for (const id of ids)
        await eventually(async () => ([200, 404].includes((await suite.plane.call((flow) => flow.deleteSession(id))).status) ? true : undefined), 30_000, 500);
    });
    for (const id of ids) expect((await suite.plane.flow.request('GET', `/v1/sessions/${id}?appName=demo`)).status).toBe(404);
    expect(outcome.lost).toEqual([]);
  });
});
