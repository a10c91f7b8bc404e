import { Inject, Injectable } from '@nestjs/common';
import { canonicalize } from '@apphost/canonical-json';
import {
  AppHostError,
  SealedReasons,
  invalidArgument,
  SEALED_ENVELOPE_SCHEMA_VERSION,
  sealedEnvelopeSchema,
  type ExpectedStore,
  type SealedCreateBeginRequest,
  type SealedCreateBeginResponse,
  type SealedCreateChunkRequest,
  type SealedCreateFinishRequest,
  type SealedCreateRequest,
  type SealedCreateResponse,
  type SealedCreateScope,
  type SealedCommitResponse,
  type SealedEnvelope,
  type SealedReadChunkResponse,
  type SealedRecordKey,
  type SealedResolveResponse,
  type SessionKey,
} from '@apphost/contracts';
import { FAULT_POINTS, SERVICE_CONTEXT, type FaultPoints, type ServiceContext } from '@apphost/runtime';
import { assembleChunks, chunkCountOf, decodeChunk, encodeChunk, parseAssembledJson, sliceChunk } from './chunked-transfer';
import type { SealedConfig } from './sealed.config';
import type { SealedFaultPoint } from './sealed.faults';
import { randomId } from './random-id';
import { chunkDigest, chunkDigests, sameDigest, sealedDigest } from './sealed-digest';
import { SealedRecordsRepository, type ExistingRecord, type RecordKeyParams } from './sealed-records.repository';
import type { SealedStore } from './sealed-store';
import { SEALED_CONFIG, SEALED_STORE } from './sealed.tokens';

/** One message for every "no such record under this key": absent, swapped, foreign and collected look the same. */
export const SEALED_NOT_FOUND_MESSAGE = 'no sealed record matches this key';

const notFound = () => new AppHostError('NOT_FOUND', SEALED_NOT_FOUND_MESSAGE);
const stale = (incarnation: number) =>
  new AppHostError('FAILED_PRECONDITION', `incarnation ${incarnation} of this session is no longer live`, {
    details: SealedReasons.details('STALE_INCARNATION', { incarnation }),
  });
const dataLoss = () =>
  new AppHostError('DATA_LOSS', 'the sealed record failed digest verification; nothing was released', { details: SealedReasons.details('DIGEST_MISMATCH') });
const uploadNotFound = () => new AppHostError('NOT_FOUND', 'no live upload with this id', { details: SealedReasons.details('UPLOAD_NOT_FOUND') });

/**
 * The sealed-result store's domain: immutable create keyed by operation instance, PENDING → COMMITTED,
 * full-key resolve with digest verification, incarnation fencing and the deletion cascade (GC and the recovery pass
 * are `SealedCollector`). Digests never leave this class except into the repository.
 */
@Injectable()
export class SealedResultService {
  readonly repository: SealedRecordsRepository;

  constructor(
    @Inject(SEALED_STORE) private readonly store: SealedStore,
    @Inject(SEALED_CONFIG) readonly config: SealedConfig,
    @Inject(FAULT_POINTS) readonly faults: FaultPoints<SealedFaultPoint>,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {
    this.repository = new SealedRecordsRepository(store.database);
  }

  /** Persistence compatibility: an expected namespace/revision other than this store's is refused before any I/O. */
  checkStore(expected: ExpectedStore | undefined): void {
    if (!expected) return;
    if (expected.namespace !== this.store.namespace || expected.revision !== this.store.revision) {
      throw new AppHostError('FAILED_PRECONDITION', 'this sealed store is not the store the caller expects (namespace or revision differ)', {
        details: SealedReasons.details('STORE_MISMATCH', { namespace: this.store.namespace, revision: this.store.revision }),
      });
    }
  }

  async create(request: SealedCreateRequest): Promise<SealedCreateResponse> {
    this.checkStore(request.expectedStore);
    return this.seal(request.scope, request.operationInstanceId, request.envelope, request.pendingTtlMs);
  }

  async beginUpload(request: SealedCreateBeginRequest): Promise<SealedCreateBeginResponse> {
    this.checkStore(request.expectedStore);
    const { chunkBytes, maxBytes } = this.config;
    if (request.totalBytes > maxBytes) {
      throw new AppHostError('PAYLOAD_TOO_LARGE', `an envelope of ${request.totalBytes} bytes exceeds the store limit of ${maxBytes}`, {
        details: SealedReasons.details('max-bytes', { bytes: request.totalBytes, limit: maxBytes }),
      });
    }
    const uploadId = randomId();
    const chunkCount = chunkCountOf(request.totalBytes, chunkBytes);
    const opened = await this.repository.beginUpload(
      {
        uploadId,
        operationInstanceId: request.operationInstanceId,
        session: request.scope.session,
        incarnation: request.scope.incarnation,
        functionCallId: request.scope.functionCallId,
        totalBytes: request.totalBytes,
        chunkBytes,
        chunkCount,
        pendingTtlMs: request.pendingTtlMs ?? this.config.pendingTtlMs,
      },
      this.config.uploadTtlMs,
    );
    if (!opened) throw stale(request.scope.incarnation);
    return { uploadId, chunkBytes, chunkCount, expiresAt: opened.expiresAt.toISOString() };
  }

  async putChunk(request: SealedCreateChunkRequest): Promise<{ uploadId: string; index: number }> {
    this.checkStore(request.expectedStore);
    const data = decodeChunk(request.data);
    const reply = { uploadId: request.uploadId, index: request.index };
    if (await this.repository.putChunk(request.uploadId, request.index, data)) {
      await this.faults.hit('chunk.after-write');
      return reply;
    }
    const why = await this.repository.diagnoseChunk(request.uploadId, request.index, data);
    if (!why || !why.live) throw uploadNotFound();
    if (request.index >= why.chunkCount) {
      throw new AppHostError('INVALID_ARGUMENT', `chunk ${request.index} is outside this upload (${why.chunkCount} chunks)`, {
        details: SealedReasons.details('CHUNK_OUT_OF_RANGE', { chunkCount: why.chunkCount }),
      });
    }
    if (why.staged) {
      if (why.same) return reply; // an idempotent repeat
      throw new AppHostError('CONFLICT', `chunk ${request.index} was already staged with other bytes`, { details: SealedReasons.details('CHUNK_CONFLICT') });
    }
    throw new AppHostError('INVALID_ARGUMENT', `chunk ${request.index} must be ${why.expectedBytes} bytes, got ${data.length}`, {
      details: SealedReasons.details('CHUNK_SIZE', { expectedBytes: why.expectedBytes }),
    });
  }

  async finishUpload(request: SealedCreateFinishRequest): Promise<SealedCreateResponse> {
    this.checkStore(request.expectedStore);
    const loaded = await this.repository.loadUpload(request.uploadId);
    if (!loaded) throw uploadNotFound();
    const { upload, chunks } = loaded;
    const bytes = assembleChunks(chunks, upload.totalBytes, upload.chunkBytes);
    const parsed = sealedEnvelopeSchema.safeParse(parseAssembledJson(bytes));
    if (!parsed.success) throw invalidArgument('the uploaded envelope', parsed.error);
    const scope: SealedCreateScope = { session: upload.session, incarnation: upload.incarnation, functionCallId: upload.functionCallId };
    const created = await this.seal(scope, upload.operationInstanceId, parsed.data, upload.pendingTtlMs);
    await this.repository.deleteUpload(upload.uploadId);
    return created;
  }

  async commit(key: SealedRecordKey, expected: ExpectedStore | undefined): Promise<SealedCommitResponse> {
    this.checkStore(expected);
    await this.faults.hit('commit.before-write');
    const params = keyParams(key);
    const committed = await this.repository.commit(params);
    if (!committed) {
      const why = await this.repository.diagnoseCommit(params);
      if (why.minLive !== null && why.minLive > key.incarnation) throw stale(key.incarnation);
      if (why.state === 'COMMITTED' && why.eventId !== key.eventId) {
        throw new AppHostError('CONFLICT', 'the record is already committed to another event', { details: SealedReasons.details('EVENT_CONFLICT') });
      }
      throw notFound();
    }
    await this.faults.hit('commit.after-write');
    return { ref: { recordId: key.recordId, schemaVersion: committed.schemaVersion }, state: 'COMMITTED', eventId: key.eventId };
  }

  async resolve(key: SealedRecordKey, expected: ExpectedStore | undefined): Promise<SealedResolveResponse> {
    this.checkStore(expected);
    const params = keyParams(key);
    let found = await this.repository.findForResolve(params);
    // A commit of this record to this event racing the bind: the bind waited on the commit's row lock and then
    // matched nothing (the row was COMMITTED by then), while the statement's snapshot still reads it PENDING. A
    // second statement sees the commit; a record still PENDING and unbound then really is not this event's.
    if (found.record?.state === 'PENDING' && !found.record.bound) found = await this.repository.findForResolve(params);
    if (found.minLive !== null && found.minLive > key.incarnation) throw stale(key.incarnation);
    const record = found.record;
    if (!record) throw notFound();
    // Crash-after-append recovery: the caller resolved the appended event, so it names the event this PENDING
    // record belongs to; the lookup bound it with commit's guarded UPDATE (GC cannot collect it afterwards).
    if (record.state === 'PENDING' && !record.bound) throw notFound();
    if (record.body.length !== record.sizeBytes || !sameDigest(sealedDigest(record.body), record.digest)) {
      this.context.logger.error({ recordId: key.recordId, reason: 'DIGEST_MISMATCH' }, 'sealed record failed verification');
      throw dataLoss();
    }
    await this.faults.hit('resolve.before-release');
    const ref = { recordId: key.recordId, schemaVersion: record.schemaVersion };
    if (record.sizeBytes <= this.config.inlineMaxBytes) {
      return { transfer: 'inline', ref, envelope: JSON.parse(record.text ?? record.body.toString('utf8')) as SealedEnvelope };
    }
    return {
      transfer: 'chunked',
      ref,
      totalBytes: record.sizeBytes,
      chunkBytes: record.chunkBytes,
      chunkCount: chunkCountOf(record.sizeBytes, record.chunkBytes),
      first: encodeChunk(sliceChunk(record.body, record.chunkBytes, 0)),
    };
  }

  async readChunk(key: SealedRecordKey, index: number, expected: ExpectedStore | undefined): Promise<SealedReadChunkResponse> {
    this.checkStore(expected);
    const found = await this.repository.readChunk(keyParams(key), index);
    if (found.minLive !== null && found.minLive > key.incarnation) throw stale(key.incarnation);
    const record = found.record;
    if (!record) throw notFound();
    if (!record.part || !record.chunkDigest) {
      const chunkCount = chunkCountOf(record.sizeBytes, record.chunkBytes);
      throw new AppHostError('INVALID_ARGUMENT', `chunk ${index} is outside this record (${chunkCount} chunks)`, {
        details: SealedReasons.details('CHUNK_OUT_OF_RANGE', { chunkCount }),
      });
    }
    if (!sameDigest(chunkDigest(record.part), record.chunkDigest)) {
      this.context.logger.error({ recordId: key.recordId, chunk: index, reason: 'DIGEST_MISMATCH' }, 'sealed record chunk failed verification');
      throw dataLoss();
    }
    return { index, data: encodeChunk(record.part) };
  }

  async purge(session: SessionKey, incarnation: number): Promise<{ done: true; deletedRecords: number }> {
    const deleted = await this.repository.purge(session, incarnation);
    this.context.logger.info(
      { incarnation, deletedRecords: deleted.records, deletedUploads: deleted.uploads },
      'sealed records purged for a deleted incarnation',
    );
    return { done: true, deletedRecords: deleted.records };
  }

  async revoke(session: SessionKey, incarnation: number): Promise<{ done: true }> {
    await this.repository.fence(session, incarnation);
    return { done: true };
  }

  /**
   * The shared create path (inline and chunked): validate and canonicalize before any write, then the immutable
   * insert; on an existing operation instance compare scope and digest in a second statement.
   */
  private async seal(
    scope: SealedCreateScope,
    operationInstanceId: string,
    envelope: SealedEnvelope,
    pendingTtlMs: number | undefined,
  ): Promise<SealedCreateResponse> {
    if (envelope.refresh.correlation.functionCallId !== scope.functionCallId) {
      throw new AppHostError('INVALID_ARGUMENT', 'the refresh record belongs to another function call than the scope', {
        details: SealedReasons.details('CORRELATION_MISMATCH'),
      });
    }
    const body = Buffer.from(canonicalize(envelope, { maxBytes: this.config.maxBytes, maxDepth: this.config.maxDepth }), 'utf8');
    const digest = sealedDigest(body);
    const record = {
      recordId: randomId(),
      operationInstanceId,
      session: scope.session,
      incarnation: scope.incarnation,
      functionCallId: scope.functionCallId,
      schemaVersion: SEALED_ENVELOPE_SCHEMA_VERSION,
      digest,
      chunkBytes: this.config.chunkBytes,
      chunkDigests: chunkDigests(body, this.config.chunkBytes),
      body,
      pendingTtlMs: pendingTtlMs ?? this.config.pendingTtlMs,
    };
    // A winner deleted (GC, purge) between our conflict and the read-back is rare; insert again a bounded number of times.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await this.repository.insertRecord(record)) {
        await this.faults.hit('create.after-store-write');
        return { ref: { recordId: record.recordId, schemaVersion: record.schemaVersion }, state: 'PENDING', created: true };
      }
      const { minLive, existing } = await this.repository.findCreateConflict(scope.session, operationInstanceId);
      if (minLive !== null && minLive > scope.incarnation) throw stale(scope.incarnation);
      if (!existing) continue;
      if (!sameScope(existing, scope) || existing.schemaVersion !== record.schemaVersion || !sameDigest(existing.digest, digest)) {
        throw new AppHostError('CONFLICT', 'this operation instance already sealed a different result', {
          details: SealedReasons.details('OPERATION_INSTANCE_CONFLICT'),
        });
      }
      return { ref: { recordId: existing.recordId, schemaVersion: existing.schemaVersion }, state: existing.state, created: false };
    }
    throw new AppHostError('UNAVAILABLE', 'the operation instance kept changing under a concurrent collector; retry', { retryable: true });
  }
}

function keyParams(key: SealedRecordKey): RecordKeyParams {
  return { session: key.session, incarnation: key.incarnation, functionCallId: key.functionCallId, recordId: key.recordId, eventId: key.eventId };
}

function sameScope(existing: ExistingRecord, scope: SealedCreateScope): boolean {
  const a = existing.session;
  const b = scope.session;
  return (
    a.tenant === b.tenant &&
    a.appName === b.appName &&
    a.userId === b.userId &&
    a.sessionId === b.sessionId &&
    existing.incarnation === scope.incarnation &&
    existing.functionCallId === scope.functionCallId
  );
}
