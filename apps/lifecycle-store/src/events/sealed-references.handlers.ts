import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { LifecycleWhichReferencesAreAppended, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { SealedReferencesRepository } from './sealed-references.repository';

/** The ledger answering the sealed store's GC and recovery pass: which records a durable event references. */
@Injectable()
export class SealedReferencesHandlers {
  constructor(@Inject(SealedReferencesRepository) private readonly references: SealedReferencesRepository) {}

  @BusHandler(LifecycleWhichReferencesAreAppended)
  async whichAreAppended(
    request: ParsedRequestOf<typeof LifecycleWhichReferencesAreAppended>,
  ): Promise<ResponseOf<typeof LifecycleWhichReferencesAreAppended>> {
    return { appended: await this.references.appendedAmong(request.references) };
  }
}
