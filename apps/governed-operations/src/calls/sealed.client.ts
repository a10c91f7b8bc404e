import type { BusClient } from '@apphost/bus';
import { canonicalize } from '@apphost/canonical-json';
import {
  SEALED_INLINE_MAX_BYTES,
  SealedCommit,
  SealedCreate,
  SealedCreateBegin,
  SealedCreateChunk,
  SealedCreateFinish,
  type SealedCommitResponse,
  type SealedCreateRequest,
  type SealedCreateResponse,
  type SealedRecordKey,
} from '@apphost/contracts';

/**
 * governed-operations' side of the sealed-result store's write protocol (create inline or chunked, commit), over
 * the published contracts. Apps never import each other, so this is not the store's own client.
 */
export class SealedWriter {
  constructor(
    private readonly bus: BusClient,
    private readonly timeoutMs: number,
  ) {}

  async create(request: SealedCreateRequest): Promise<SealedCreateResponse> {
    const bytes = Buffer.from(canonicalize(request.envelope), 'utf8');
    const options = { timeoutMs: this.timeoutMs };
    if (bytes.length <= SEALED_INLINE_MAX_BYTES) return this.bus.request(SealedCreate, request, options);
    const { scope, operationInstanceId, pendingTtlMs, expectedStore } = request;
    const begun = await this.bus.request(SealedCreateBegin, { scope, operationInstanceId, totalBytes: bytes.length, pendingTtlMs, expectedStore }, options);
    for (let index = 0; index < begun.chunkCount; index++) {
      const data = bytes.subarray(index * begun.chunkBytes, (index + 1) * begun.chunkBytes).toString('base64');
      await this.bus.request(SealedCreateChunk, { uploadId: begun.uploadId, index, data, expectedStore }, options);
    }
    return this.bus.request(SealedCreateFinish, { uploadId: begun.uploadId, expectedStore }, options);
  }

  commit(key: SealedRecordKey): Promise<SealedCommitResponse> {
    return this.bus.request(SealedCommit, { key }, { timeoutMs: this.timeoutMs });
  }
}
