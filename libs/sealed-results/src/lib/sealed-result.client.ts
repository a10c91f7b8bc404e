import type { BusClient, BusRequestOptions } from '@apphost/bus';
import { canonicalize } from '@apphost/canonical-json';
import {
  AppHostError,
  SealedReasons,
  SEALED_INLINE_MAX_BYTES,
  SealedCommit,
  SealedCreate,
  SealedCreateBegin,
  SealedCreateChunk,
  SealedCreateFinish,
  SealedReadChunk,
  SealedResolve,
  type ExpectedStore,
  type SealedCommitRequest,
  type SealedCommitResponse,
  type SealedCreateRequest,
  type SealedCreateResponse,
  type SealedEnvelope,
  type SealedRecordKey,
  type SealedResultRef,
} from '@apphost/contracts';

/**
 * The caller side of the sealed-result store's bus contracts. `create`: envelopes up to SEALED_INLINE_MAX_BYTES
 * canonical bytes go in one `create`; larger ones are staged in SEALED_CHUNK_BYTES chunks (begin, chunk…, finish).
 * `resolve` follows a chunked reply with `read-chunk` calls and parses the reassembled canonical bytes. `commit`
 * binds a PENDING record to its appended event.
 *
 * Pure protocol over a BusClient; every request carries the `options` given here (e.g. `timeoutMs`), and the
 * request being served (correlation id, deadline) carries over through `RequestContexts`.
 */
export class SealedResultClient {
  constructor(
    private readonly bus: BusClient,
    private readonly options: BusRequestOptions = {},
  ) {}

  async create(request: SealedCreateRequest): Promise<SealedCreateResponse> {
    const canonical = Buffer.from(canonicalize(request.envelope), 'utf8');
    if (canonical.length <= SEALED_INLINE_MAX_BYTES) return this.bus.request(SealedCreate, request, this.options);
    return this.createChunked(request, canonical);
  }

  /** The chunked path for canonical bytes (exposed so tests can send arbitrary bytes). */
  async createChunked(request: Omit<SealedCreateRequest, 'envelope'>, bytes: Buffer): Promise<SealedCreateResponse> {
    const { expectedStore } = request;
    const begun = await this.bus.request(
      SealedCreateBegin,
      { scope: request.scope, operationInstanceId: request.operationInstanceId, totalBytes: bytes.length, pendingTtlMs: request.pendingTtlMs, expectedStore },
      this.options,
    );
    for (let index = 0; index < begun.chunkCount; index++) {
      const data = bytes.subarray(index * begun.chunkBytes, (index + 1) * begun.chunkBytes).toString('base64');
      await this.bus.request(SealedCreateChunk, { uploadId: begun.uploadId, index, data, expectedStore }, this.options);
    }
    return this.bus.request(SealedCreateFinish, { uploadId: begun.uploadId, expectedStore }, this.options);
  }

  commit(key: SealedRecordKey, expectedStore?: SealedCommitRequest['expectedStore']): Promise<SealedCommitResponse> {
    return this.bus.request(SealedCommit, expectedStore === undefined ? { key } : { key, expectedStore }, this.options);
  }

  async resolve(key: SealedRecordKey, expectedStore?: ExpectedStore): Promise<{ ref: SealedResultRef; envelope: SealedEnvelope }> {
    const reply = await this.bus.request(SealedResolve, { key, expectedStore }, this.options);
    if (reply.transfer === 'inline') return { ref: reply.ref, envelope: reply.envelope };
    const parts: Buffer[] = [Buffer.from(reply.first, 'base64')];
    for (let index = 1; index < reply.chunkCount; index++) {
      const chunk = await this.bus.request(SealedReadChunk, { key, index, expectedStore }, this.options);
      parts.push(Buffer.from(chunk.data, 'base64'));
    }
    const bytes = Buffer.concat(parts);
    if (bytes.length !== reply.totalBytes)
      throw new AppHostError('DATA_LOSS', 'reassembled sealed bytes have the wrong length', { details: SealedReasons.details('DIGEST_MISMATCH') });
    return { ref: reply.ref, envelope: JSON.parse(bytes.toString('utf8')) as SealedEnvelope };
  }
}
