import { openCoordinationStore, type ServiceDefinition } from '@apphost/runtime';

/** governed-operations as a deployable unit: shared ephemeral state in Redis; the coordinator arrives in its own issue. */
export const governedOperationsService: ServiceDefinition = {
  name: 'governed-operations',
  requires: ['redis'],
  openStores: async (context) => [await openCoordinationStore(context)],
};
