import { Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { GovernedDecideConfirmation, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { ConfirmationService } from './confirmation.service';

/** governed-operations' confirmation decisions (queue group `governed-operations`: any replica serves any decision). */
@Injectable()
export class ConfirmationHandlers {
  constructor(private readonly confirmations: ConfirmationService) {}

  @BusHandler(GovernedDecideConfirmation)
  decideConfirmation(r: ParsedRequestOf<typeof GovernedDecideConfirmation>): Promise<ResponseOf<typeof GovernedDecideConfirmation>> {
    return this.confirmations.decide(r);
  }
}
