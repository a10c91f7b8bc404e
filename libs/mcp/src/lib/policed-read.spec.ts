import { BusClient, BusServer, InProcessTransport } from '@apphost/bus';
import { ConnReadResource } from '@apphost/contracts';
import { readUnderPolicy, type PolicedRead } from './policed-read';

/** A connection owner on the in-process bus that records every read and answers what the test says. */
async function ownerAnswering(answer: (uri: string) => Record<string, unknown>) {
  const transport = new InProcessTransport();
  const reads: { uri: string; textReferenceFromBytes?: number; generationId: string }[] = [];
  const owner = new BusServer({
    transport,
    instanceId: 'owner-1',
    queueGroup: 'policed-read-owner',
    logger: { error: () => undefined, warn: () => undefined },
  });
  owner.register(
    ConnReadResource,
    (r) => {
      reads.push({ uri: r.uri, generationId: r.ref.generationId, ...(r.textReferenceFromBytes ? { textReferenceFromBytes: r.textReferenceFromBytes } : {}) });
      return answer(r.uri) as { contents: Record<string, unknown>[] };
    },
    { routing: 'instance', instanceSegment: 'conn' },
  );
  owner.start();
  await owner.ready();
  return { bus: new BusClient({ transport, defaultTimeoutMs: 5_000 }), reads, stop: () => owner.stop(0) };
}

const GENERATION = { generationId: '7f0c2a4e-5b1d-4c3e-9a2f-1d2e3f4a5b6c', fence: 3, ownerInstanceId: 'owner-1' };
const POLICY = { exact: ['ui://srv/widget.html'], prefixes: ['ui://srv/assets'] };
const LIMITS = { maxItemBytes: 100, maxTotalBytes: 150 };
const read = (uri: string, over: Partial<PolicedRead> = {}): PolicedRead => ({ uri, policy: POLICY, limits: LIMITS, ...over });

describe('readUnderPolicy', () => {
  it('asks the owner for the canonical URI and answers the items with canonical URIs, their bytes and well-formed cache hints', async () => {
    const owner = await ownerAnswering(() => ({
      contents: [{ uri: 'UI://SRV/widget.html', mimeType: 'text/html;profile=mcp-app', text: 'héllo' }],
      ttlMs: 5000,
      cacheScope: 'private',
    }));
    try {
      const answer = await readUnderPolicy(owner.bus, GENERATION, read('UI://Srv/widget.html', { textReferenceFromBytes: 64 }));
      expect(answer).toEqual({
        contents: [{ uri: 'ui://srv/widget.html', mimeType: 'text/html;profile=mcp-app', text: 'héllo' }],
        totalBytes: 6,
        ttlMs: 5000,
        cacheScope: 'private',
      });
      expect(owner.reads).toEqual([{ uri: 'ui://srv/widget.html', generationId: GENERATION.generationId, textReferenceFromBytes: 64 }]);
    } finally {
      await owner.stop();
    }
  });

  it('a URI outside the policy is refused before anything is sent', async () => {
    const owner = await ownerAnswering(() => ({ contents: [] }));
    try {
      await expect(readUnderPolicy(owner.bus, GENERATION, read('ui://srv/other.html'))).rejects.toMatchObject({
        code: 'PERMISSION_DENIED',
        details: { reason: 'RESOURCE_POLICY_DENIED', side: 'request' },
      });
      await expect(readUnderPolicy(owner.bus, GENERATION, read('ui://srv/assets/../widget.html'))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(owner.reads).toEqual([]);
    } finally {
      await owner.stop();
    }
  });

  it('one returned item outside the policy rejects the whole answer; so do an item or a total over the limits; malformed hints are dropped', async () => {
    const answers: Record<string, Record<string, unknown>> = {
      'ui://srv/assets/mixed': {
        contents: [
          { uri: 'ui://srv/assets/a', text: 'a' },
          { uri: 'ui://evil/b', text: 'b' },
        ],
      },
      'ui://srv/assets/big': { contents: [{ uri: 'ui://srv/assets/big', text: 'x'.repeat(101) }] },
      'ui://srv/assets/many': {
        contents: [
          { uri: 'ui://srv/assets/1', text: 'x'.repeat(80) },
          { uri: 'ui://srv/assets/2', text: 'x'.repeat(80) },
        ],
      },
      'ui://srv/assets/hints': { contents: [{ uri: 'ui://srv/assets/hints', text: 'ok' }], ttlMs: -1, cacheScope: 'x'.repeat(65) },
    };
    const owner = await ownerAnswering((uri) => answers[uri]);
    try {
      await expect(readUnderPolicy(owner.bus, GENERATION, read('ui://srv/assets/mixed'))).rejects.toMatchObject({
        code: 'PERMISSION_DENIED',
        details: { reason: 'RESOURCE_POLICY_DENIED', side: 'response', mixed: true, denied: [{ index: 1, why: 'OUTSIDE_POLICY' }] },
      });
      await expect(readUnderPolicy(owner.bus, GENERATION, read('ui://srv/assets/big'))).rejects.toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
        details: { reason: 'READ_ITEM_TOO_LARGE' },
      });
      await expect(readUnderPolicy(owner.bus, GENERATION, read('ui://srv/assets/many'))).rejects.toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
        details: { reason: 'READ_TOTAL_TOO_LARGE' },
      });
      await expect(readUnderPolicy(owner.bus, GENERATION, read('ui://srv/assets/hints'))).resolves.toEqual({
        contents: [{ uri: 'ui://srv/assets/hints', text: 'ok' }],
        totalBytes: 2,
      });
    } finally {
      await owner.stop();
    }
  });

  it("an owner that is not running is the generation's end (CONNECTION_GENERATION_GONE), retryable", async () => {
    const owner = await ownerAnswering(() => ({ contents: [] }));
    try {
      await expect(readUnderPolicy(owner.bus, { ...GENERATION, ownerInstanceId: 'owner-gone' }, read('ui://srv/widget.html'))).rejects.toMatchObject({
        code: 'FAILED_PRECONDITION',
        retryable: true,
        details: { reason: 'CONNECTION_GENERATION_GONE', why: 'OWNER_GONE' },
      });
    } finally {
      await owner.stop();
    }
  });

  it('onRefused hears of an answer the policy refused, and of nothing else', async () => {
    const owner = await ownerAnswering((uri) =>
      uri === 'ui://srv/assets/mixed' ? { contents: [{ uri: 'ui://evil/b', text: 'b' }] } : { contents: [{ uri, text: 'ok' }] },
    );
    const refused: string[] = [];
    const onRefused = (error: Error) => refused.push(error.message);
    try {
      await expect(readUnderPolicy(owner.bus, GENERATION, read('ui://srv/assets/mixed'), { onRefused })).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
      await expect(readUnderPolicy(owner.bus, GENERATION, read('ui://srv/other.html'), { onRefused })).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
      await expect(readUnderPolicy(owner.bus, GENERATION, read('ui://srv/widget.html'), { onRefused })).resolves.toMatchObject({ totalBytes: 2 });
      expect(refused).toEqual([expect.stringContaining('outside the resource policy')]);
    } finally {
      await owner.stop();
    }
  });
});
