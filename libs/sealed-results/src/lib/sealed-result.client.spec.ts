import { randomBytes } from 'node:crypto';
import { BusClient, BusServer, InProcessTransport } from '@apphost/bus';
import { canonicalize } from '@apphost/canonical-json';
import {
  AppHostError,
  SEALED_CHUNK_BYTES,
  SEALED_INLINE_MAX_BYTES,
  SealedCommit,
  SealedCreate,
  SealedCreateBegin,
  SealedCreateChunk,
  SealedCreateFinish,
  SealedReadChunk,
  SealedResolve,
  type ExpectedStore,
  type SealedEnvelope,
  type SealedRecordKey,
} from '@apphost/contracts';
import { SealedResultClient } from './sealed-result.client';

const recordId = () => randomBytes(16).toString('base64url');
const session = { tenant: 'acme', appName: 'dash', userId: 'alice', sessionId: 's-1' };
const scope = { session, incarnation: 1, functionCallId: 'fc-1' };
const pinned: ExpectedStore = { namespace: '6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f', revision: '1' };

function envelopeOf(bytes: number): SealedEnvelope {
  const rows: string[] = [];
  for (let i = 0; i * 1027 < bytes; i++) rows.push(`${i}:`.padEnd(1024, String.fromCharCode(97 + (i % 26))));
  return {
    result: { content: [{ type: 'text', text: 'ready' }], structuredContent: { rows } },
    refresh: {
      serverId: 'srv',
      toolsetId: 'ts',
      nativeToolName: 'show',
      arguments: { kind: 'inline', value: {} },
      catalogGeneration: 'cat-1',
      bindingRevision: 'k1:v1:0',
      replayClassification: { source: 'profile', revision: 'r1' },
      initiatingOrigin: 'model',
      correlation: { invocationId: 'inv-1', functionCallId: 'fc-1' },
    },
  };
}

/** The store's side of the protocol, in memory: what each operation received, and the bytes it holds. */
function fakeStore(transport: InProcessTransport) {
  const server = new BusServer({
    transport,
    instanceId: 'fake-sealed',
    queueGroup: 'sealed-result-store',
    logger: { error: () => undefined, warn: () => undefined },
  });
  const state = {
    calls: [] as string[],
    expected: [] as (ExpectedStore | undefined)[],
    records: new Map<string, Buffer>(),
    uploads: new Map<string, Buffer[]>(),
    shortBy: 0,
  };
  const seen = (operation: string, expectedStore?: ExpectedStore) => {
    state.calls.push(operation);
    state.expected.push(expectedStore);
  };
  server.register(SealedCreate, (r) => {
    seen('create', r.expectedStore);
    const id = recordId();
    state.records.set(id, Buffer.from(canonicalize(r.envelope), 'utf8'));
    return { ref: { recordId: id, schemaVersion: 1 }, state: 'PENDING' as const, created: true };
  });
  server.register(SealedCreateBegin, (r) => {
    seen('create-begin', r.expectedStore);
    const uploadId = recordId();
    state.uploads.set(uploadId, []);
    return {
      uploadId,
      chunkBytes: SEALED_CHUNK_BYTES,
      chunkCount: Math.ceil(r.totalBytes / SEALED_CHUNK_BYTES),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    };
  });
  server.register(SealedCreateChunk, (r) => {
    seen(`create-chunk:${r.index}`, r.expectedStore);
    state.uploads.get(r.uploadId)![r.index] = Buffer.from(r.data, 'base64');
    return { uploadId: r.uploadId, index: r.index };
  });
  server.register(SealedCreateFinish, (r) => {
    seen('create-finish', r.expectedStore);
    const id = recordId();
    state.records.set(id, Buffer.concat(state.uploads.get(r.uploadId)!));
    return { ref: { recordId: id, schemaVersion: 1 }, state: 'PENDING' as const, created: true };
  });
  server.register(SealedCommit, (r) => {
    seen('commit', r.expectedStore);
    return { ref: { recordId: r.key.recordId, schemaVersion: 1 }, state: 'COMMITTED' as const, eventId: r.key.eventId };
  });
  const stored = (key: SealedRecordKey) => {
    const bytes = state.records.get(key.recordId);
    if (!bytes) throw new AppHostError('NOT_FOUND', 'no such record');
    return bytes.subarray(0, bytes.length - state.shortBy);
  };
  server.register(SealedResolve, (r) => {
    seen('resolve', r.expectedStore);
    const full = state.records.get(r.key.recordId);
    const bytes = stored(r.key);
    const ref = { recordId: r.key.recordId, schemaVersion: 1 };
    if (full!.length <= SEALED_INLINE_MAX_BYTES) return { transfer: 'inline' as const, ref, envelope: JSON.parse(bytes.toString('utf8')) as SealedEnvelope };
    return {
      transfer: 'chunked' as const,
      ref,
      totalBytes: full!.length,
      chunkBytes: SEALED_CHUNK_BYTES,
      chunkCount: Math.ceil(full!.length / SEALED_CHUNK_BYTES),
      first: bytes.subarray(0, SEALED_CHUNK_BYTES).toString('base64'),
    };
  });
  server.register(SealedReadChunk, (r) => {
    seen(`read-chunk:${r.index}`, r.expectedStore);
    return {
      index: r.index,
      data: stored(r.key)
        .subarray(r.index * SEALED_CHUNK_BYTES, (r.index + 1) * SEALED_CHUNK_BYTES)
        .toString('base64'),
    };
  });
  server.start();
  return { state, stop: () => server.stop(100) };
}

describe('SealedResultClient', () => {
  const transport = new InProcessTransport(2 * 1024 * 1024);
  const store = fakeStore(transport);
  const client = new SealedResultClient(new BusClient({ transport, defaultTimeoutMs: 5000 }), { timeoutMs: 5000 });

  beforeEach(() => {
    store.state.calls = [];
    store.state.expected = [];
    store.state.shortBy = 0;
  });

  afterAll(() => store.stop());

  it('creates an envelope of at most SEALED_INLINE_MAX_BYTES canonical bytes in one create, and resolves it inline', async () => {
    const envelope = envelopeOf(4096);
    const created = await client.create({ scope, operationInstanceId: 'op-small', envelope, expectedStore: pinned });
    const key = { ...scope, eventId: 'evt-1', recordId: created.ref.recordId };
    expect(await client.resolve(key, pinned)).toEqual({ ref: created.ref, envelope });
    expect(store.state.calls).toEqual(['create', 'resolve']);
    expect(store.state.expected).toEqual([pinned, pinned]);
  });

  it('stages a larger envelope in chunks (begin, each chunk, finish) and reassembles it on resolve', async () => {
    const envelope = envelopeOf(SEALED_INLINE_MAX_BYTES + 300 * 1024);
    const bytes = Buffer.from(canonicalize(envelope), 'utf8');
    const chunks = Math.ceil(bytes.length / SEALED_CHUNK_BYTES);
    expect(chunks).toBeGreaterThan(1);
    const created = await client.create({ scope, operationInstanceId: 'op-large', envelope, expectedStore: pinned });
    expect(store.state.records.get(created.ref.recordId)).toEqual(bytes);
    const key = { ...scope, eventId: 'evt-2', recordId: created.ref.recordId };
    expect(await client.resolve(key, pinned)).toEqual({ ref: created.ref, envelope });
    const indexes = Array.from({ length: chunks }, (_, i) => i);
    expect(store.state.calls).toEqual([
      'create-begin',
      ...indexes.map((i) => `create-chunk:${i}`),
      'create-finish',
      'resolve',
      ...indexes.slice(1).map((i) => `read-chunk:${i}`),
    ]);
    expect(store.state.expected).toEqual(store.state.calls.map(() => pinned));
  });

  it('refuses reassembled bytes of the wrong length as DATA_LOSS (DIGEST_MISMATCH)', async () => {
    const created = await client.create({ scope, operationInstanceId: 'op-short', envelope: envelopeOf(SEALED_INLINE_MAX_BYTES + 4096) });
    store.state.shortBy = 7;
    const error = await client.resolve({ ...scope, eventId: 'evt-3', recordId: created.ref.recordId }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppHostError);
    expect(error).toMatchObject({ code: 'DATA_LOSS', details: { reason: 'DIGEST_MISMATCH' } });
  });

  it('commits a record to its event', async () => {
    const created = await client.create({ scope, operationInstanceId: 'op-commit', envelope: envelopeOf(100) });
    const key = { ...scope, eventId: 'evt-4', recordId: created.ref.recordId };
    expect(await client.commit(key)).toEqual({ ref: created.ref, state: 'COMMITTED', eventId: 'evt-4' });
    expect(store.state.calls).toEqual(['create', 'commit']);
  });

  it('passes the store errors through as they come', async () => {
    const error = await client.resolve({ ...scope, eventId: 'evt-5', recordId: recordId() }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppHostError);
    expect((error as AppHostError).code).toBe('NOT_FOUND');
  });
});
