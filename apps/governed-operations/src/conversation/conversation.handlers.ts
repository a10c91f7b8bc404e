import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { GovernedGetModelContext, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { ModelContext } from './model-context';

/** The conversation's reads (queue group `governed-operations`: registers live in the View records, so any replica answers). */
@Injectable()
export class ConversationHandlers {
  constructor(@Inject(ModelContext) private readonly context: ModelContext) {}

  @BusHandler(GovernedGetModelContext)
  getModelContext(r: ParsedRequestOf<typeof GovernedGetModelContext>): Promise<ResponseOf<typeof GovernedGetModelContext>> {
    return this.context.read(r.session);
  }
}
