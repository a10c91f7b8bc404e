import type { CoordinationStore } from '@apphost/coordination';
import { openCoordinationStore, type ServiceDefinition } from '@apphost/runtime';
import { parseBatchConfig } from './governed.config';
import { GovernedOperationsModule } from './governed.module';

/**
 * governed-operations as a deployable unit: shared ephemeral state (confirmation permits) in Redis; model tool
 * batches (admission, confirmation, result pipeline, sealing, one appended event) over the bus (see README.md).
 */
export const governedOperationsService: ServiceDefinition = {
  name: 'governed-operations',
  requires: ['redis'],
  openStores: async (context) => {
    parseBatchConfig(context.env); // bad settings stop startup before the store opens
    return [await openCoordinationStore(context)];
  },
  imports: (context, stores) => {
    const [coordination] = stores as CoordinationStore[]; // openStores above opens exactly this one
    return [GovernedOperationsModule.register(parseBatchConfig(context.env), context.logger, coordination)];
  },
};
