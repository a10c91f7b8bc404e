import { Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import {
  SealedCommit,
  SealedCreate,
  SealedCreateBegin,
  SealedCreateChunk,
  SealedCreateFinish,
  SealedGc,
  SealedPurge,
  SealedReadChunk,
  SealedResolve,
  SealedRevoke,
  type ParsedRequestOf,
  type ResponseOf,
} from '@apphost/contracts';
import { SealedCollector } from './sealed-collector';
import { SealedResultService } from './sealed-result.service';

/** The store's bus surface: requests arrive validated against their contracts; the domain lives in the service. */
@Injectable()
export class SealedResultHandlers {
  constructor(
    private readonly sealed: SealedResultService,
    private readonly collector: SealedCollector,
  ) {}

  @BusHandler(SealedCreate)
  create(request: ParsedRequestOf<typeof SealedCreate>): Promise<ResponseOf<typeof SealedCreate>> {
    return this.sealed.create(request);
  }

  @BusHandler(SealedCreateBegin)
  createBegin(request: ParsedRequestOf<typeof SealedCreateBegin>): Promise<ResponseOf<typeof SealedCreateBegin>> {
    return this.sealed.beginUpload(request);
  }

  @BusHandler(SealedCreateChunk)
  createChunk(request: ParsedRequestOf<typeof SealedCreateChunk>): Promise<ResponseOf<typeof SealedCreateChunk>> {
    return this.sealed.putChunk(request);
  }

  @BusHandler(SealedCreateFinish)
  createFinish(request: ParsedRequestOf<typeof SealedCreateFinish>): Promise<ResponseOf<typeof SealedCreateFinish>> {
    return this.sealed.finishUpload(request);
  }

  @BusHandler(SealedCommit)
  commit(request: ParsedRequestOf<typeof SealedCommit>): Promise<ResponseOf<typeof SealedCommit>> {
    return this.sealed.commit(request.key, request.expectedStore);
  }

  @BusHandler(SealedResolve)
  resolve(request: ParsedRequestOf<typeof SealedResolve>): Promise<ResponseOf<typeof SealedResolve>> {
    return this.sealed.resolve(request.key, request.expectedStore);
  }

  @BusHandler(SealedReadChunk)
  readChunk(request: ParsedRequestOf<typeof SealedReadChunk>): Promise<ResponseOf<typeof SealedReadChunk>> {
    return this.sealed.readChunk(request.key, request.index, request.expectedStore);
  }

  @BusHandler(SealedGc)
  gc(request: ParsedRequestOf<typeof SealedGc>): Promise<ResponseOf<typeof SealedGc>> {
    return this.collector.gc(request.limit);
  }

  @BusHandler(SealedPurge)
  purge(request: ParsedRequestOf<typeof SealedPurge>): Promise<ResponseOf<typeof SealedPurge>> {
    return this.sealed.purge(request.session, request.incarnation);
  }

  @BusHandler(SealedRevoke)
  revoke(request: ParsedRequestOf<typeof SealedRevoke>): Promise<ResponseOf<typeof SealedRevoke>> {
    return this.sealed.revoke(request.session, request.incarnation);
  }
}
