import { openCoordinationStore, type ServiceDefinition } from '@apphost/runtime';
import { parseBatchConfig } from './batch/batch.config';
import { GovernedOperationsModule } from './governed.module';

/**
 * governed-operations as a deployable unit: shared ephemeral state in Redis; model tool batches (admission, result
 * pipeline, sealing, one appended event) over the bus (see README.md).
 */
export const governedOperationsService: ServiceDefinition = {
  name: 'governed-operations',
  requires: ['redis'],
  openStores: async (context) => {
    parseBatchConfig(context.env); // bad settings stop startup before the store opens
    return [await openCoordinationStore(context)];
  },
  imports: (context) => [GovernedOperationsModule.register(parseBatchConfig(context.env), context.logger)],
};
