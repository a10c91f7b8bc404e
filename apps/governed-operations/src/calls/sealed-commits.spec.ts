import { Registry } from 'prom-client';
import { AppHostError, GovernedRunToolBatch, type SealedRecordKey } from '@apphost/contracts';
import { FAULT_POINTS, FaultPoints, type FaultPoints as Faults } from '@apphost/runtime';
import type { SealedResultClient } from '@apphost/sealed-results';
import { deferred, descriptors, latch, testLogger } from '@apphost/testing';
import type { GovernedFaultPoint } from '../governed.faults';
import { GovernedMetrics } from '../governed.metrics';
import { principal, session, startFakePlane } from '../test/fake-plane';
import { SealedCommits } from './sealed-commits';

const scope = { key: session, incarnation: 3 };

/** A sealed-store client whose commits wait for `gate` (when set), then answer or fail. */
function storeClient() {
  const seen: SealedRecordKey[] = [];
  const client = {
    gate: undefined as Promise<void> | undefined,
    failure: undefined as AppHostError | undefined,
    seen,
    async commit(key: SealedRecordKey) {
      await client.gate;
      if (client.failure) throw client.failure;
      seen.push(key);
      return { ref: { recordId: key.recordId, schemaVersion: 1 }, state: 'COMMITTED' as const, eventId: key.eventId };
    },
  };
  return client;
}

function tracker(client: ReturnType<typeof storeClient>, drainMs = 2_000) {
  const registry = new Registry();
  const commits = new SealedCommits(
    client as unknown as SealedResultClient,
    new FaultPoints<GovernedFaultPoint>(),
    new GovernedMetrics(registry),
    testLogger('sealed-commits'),
    drainMs,
  );
  const counted = async (outcome: string) =>
    (await registry.getSingleMetric('apphost_governed_sealed_commits_total')?.get())?.values.find((v) => v.labels['outcome'] === outcome)?.value ?? 0;
  return { commits, counted };
}

describe('SealedCommits', () => {
  it('starts every commit at once, tracks it until it settles, and counts each outcome', async () => {
    const client = storeClient();
    const held = deferred();
    client.gate = held.promise;
    const { commits, counted } = tracker(client);
    commits.start(scope, 7, [
      { functionCallId: 'a', recordId: 'r-a' },
      { functionCallId: 'b', recordId: 'r-b' },
    ]);
    expect(commits.pending).toBe(2);
    expect(await commits.drain(50)).toBe(false); // still held: the bound answers
    held.resolve();
    expect(await commits.drain(2_000)).toBe(true);
    expect(commits.pending).toBe(0);
    expect(client.seen.map((k) => [k.functionCallId, k.eventId, k.recordId])).toEqual([
      ['a', '7', 'r-a'],
      ['b', '7', 'r-b'],
    ]);
    expect(await counted('committed')).toBe(2);

    client.failure = new AppHostError('UNAVAILABLE', 'the sealed store is down');
    commits.start(scope, 8, [{ functionCallId: 'c', recordId: 'r-c' }]);
    expect(await commits.drain(2_000)).toBe(true); // a failure settles too, and is not thrown anywhere
    expect(await counted('failed')).toBe(1);
    expect(await counted('committed')).toBe(2);
  });

  it('shutdown waits for the commits in flight, at most its bound', async () => {
    const client = storeClient();
    client.gate = new Promise(() => undefined); // never answers
    const { commits } = tracker(client, 200);
    commits.start(scope, 9, [{ functionCallId: 'd', recordId: 'r-d' }]);
    const started = Date.now();
    await commits.onApplicationShutdown();
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(commits.pending).toBe(1);
  });
});

describe('governed-operations shutdown with a commit in flight (fake collaborators on a private NATS)', () => {
  it('the batch answered before its commit; stopping the service waits for that commit, which then lands', async () => {
    const plane = await startFakePlane();
    try {
      const hold = latch();
      plane.service.running.app.get<Faults<GovernedFaultPoint>>(FAULT_POINTS).arm('batch.before-commit', hold.action);
      const res = await plane.service.client.request(
        GovernedRunToolBatch,
        { principal, session, invocationId: 'inv-stop', calls: [{ functionCallId: 'w', tool: 'widget' }] },
        { timeoutMs: 20_000 },
      );
      await hold.reached;
      expect(plane.state.committed).toEqual([]);
      let stopped = false;
      const stopping = plane.stopService().then(() => (stopped = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(stopped).toBe(false); // held by the commit in flight
      hold.release();
      await stopping;
      expect(plane.state.committed.map((c) => [c.key.functionCallId, c.key.eventId, c.key.recordId])).toEqual([
        ['w', String(res.eventId), descriptors(res)[0].sealedResultRef?.recordId],
      ]);
    } finally {
      await plane.stop();
    }
  }, 60_000);
});
