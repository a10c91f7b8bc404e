import { Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { GovernedRunToolBatch, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { ToolBatchService } from './tool-batch.service';

/** governed-operations' batch operations (queue group `governed-operations`: any replica serves any request). */
@Injectable()
export class ToolBatchHandlers {
  constructor(private readonly batches: ToolBatchService) {}

  @BusHandler(GovernedRunToolBatch)
  runToolBatch(r: ParsedRequestOf<typeof GovernedRunToolBatch>): Promise<ResponseOf<typeof GovernedRunToolBatch>> {
    return this.batches.run(r);
  }
}
