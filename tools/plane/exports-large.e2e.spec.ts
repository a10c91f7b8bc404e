import { createHash } from 'node:crypto';
import { RegistryPutProfile, RegistryPutToolset, type HostProfile, type RunToolBatchResponse } from '@apphost/contracts';
import { descriptors, dropSchemasWithPrefix, startPrivateNats, uniquePrefix, type PrivateNats } from '@apphost/testing';
import { fixtureSpec, profile, token } from './catalog-harness';
import { bootExportPlane, type ExportPlane } from './exports-harness';

jest.setTimeout(180_000);

/** Over the bus payload limit (1 MiB − 8 KiB), so the released reply must move in chunks. */
const PAD_BYTES = 1536 * 1024;
const LARGE: NonNullable<HostProfile['export']> = { projections: ['content', 'full'], maxBytes: 4 * 1024 * 1024, perPrincipalPerMinute: 100, bulkCap: 100 };

/**
 * A `full` projection larger than one bus reply, exported through the gateway on the real plane (private NATS, real
 * PostgreSQL and Redis, the stdio `stateful-nonce` fixture padding its structuredContent): it is released whole, byte
 * for byte what the tool returned, and audited with its size.
 */
describe('export: a result over the bus payload limit', () => {
  const prefix = uniquePrefix();
  let nats: PrivateNats;
  let plane: ExportPlane;
  let alice: string;

  const http = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${plane.base}${url}`, {
      method,
      headers: { authorization: `Bearer ${alice}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Record<string, unknown> };
  };

  beforeAll(async () => {
    nats = await startPrivateNats();
    plane = await bootExportPlane(nats.url, prefix, { 'large-app': 'large' });
    alice = await token('alice', 'runtime export audit');
    await plane.registry.client.request(RegistryPutProfile, { profileId: 'p-large', profile: { ...profile(), export: LARGE } });
    const put = await plane.registry.client.request(
      RegistryPutToolset,
      { toolsetId: 'large', spec: fixtureSpec('stateful-nonce', 'p-large') },
      { timeoutMs: 30_000 },
    );
    expect(put.status.state).toBe('PROFILE_BOUND');
  }, 180_000);

  afterAll(async () => {
    await plane?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  it('a full projection over 1 MiB is released whole and audited with its size', async () => {
    expect((await http('POST', '/v1/sessions', { appName: 'large-app', sessionId: 'big' })).status).toBe(201);
    const batch = await http('POST', '/v1/sessions/big/tool-batches', {
      appName: 'large-app',
      invocationId: 'inv',
      calls: [{ tool: 'start-session', arguments: { padBytes: PAD_BYTES } }],
    });
    expect(batch.status).toBe(200);
    const ev = batch.body as unknown as RunToolBatchResponse;
    const [d] = descriptors(ev);
    expect(d.sealedResultRef).not.toBeNull();
    // The model projection stays small: the filler is only in the sealed structuredContent.
    expect(batch.text.length).toBeLessThan(64 * 1024);
    const nonce = (JSON.parse((ev.functionResponses[0].response.content as Array<{ text: string }>)[0].text) as { nonce: string }).nonce;

    const res = await http('POST', '/v1/exports', {
      appName: 'large-app',
      sessionId: 'big',
      eventId: ev.eventId,
      functionCallId: d.correlation.functionCallId,
      operationId: 'op-large',
      projection: 'full',
    });
    expect(res.status).toBe(200);
    expect(res.text.length).toBeGreaterThan(1024 * 1024);
    const result = res.body.result as { structuredContent: { nonce: string; pad: string }; content: unknown[] };
    expect(result.structuredContent.nonce).toBe(nonce);
    expect(result.structuredContent.pad).toHaveLength(PAD_BYTES);
    const digest = (s: string) => createHash('sha256').update(s).digest('hex');
    expect(digest(result.structuredContent.pad)).toBe(digest('p'.repeat(PAD_BYTES)));
    expect(res.body).toMatchObject({ status: 'released', releaseCount: 1, bytes: expect.any(Number) });
    expect(res.body.bytes as number).toBeGreaterThan(PAD_BYTES);

    const listed = await http('GET', '/v1/exports?appName=large-app&sessionId=big');
    expect((listed.body.exports as Array<Record<string, unknown>>).map((r) => [r.operationId, r.status, r.bytes])).toEqual([
      ['op-large', 'released', res.body.bytes],
    ]);
  });
});
