import { Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { GovernedDecideConfirmation, GovernedRunToolBatch, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { ConfirmationService } from '../confirmation/confirmation.service';
import { ToolBatchService } from './tool-batch.service';

/** governed-operations' batch operations (queue group `governed-operations`: any replica serves any request). */
@Injectable()
export class ToolBatchHandlers {
  constructor(
    private readonly batches: ToolBatchService,
    private readonly confirmations: ConfirmationService,
  ) {}

  @BusHandler(GovernedRunToolBatch)
  runToolBatch(r: ParsedRequestOf<typeof GovernedRunToolBatch>): Promise<ResponseOf<typeof GovernedRunToolBatch>> {
    return this.batches.run(r);
  }

  @BusHandler(GovernedDecideConfirmation)
  decideConfirmation(r: ParsedRequestOf<typeof GovernedDecideConfirmation>): Promise<ResponseOf<typeof GovernedDecideConfirmation>> {
    return this.confirmations.decide(r);
  }
}
