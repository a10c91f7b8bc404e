import type { CoordinationStore } from '@apphost/coordination';
import { defineService, openCoordinationStore } from '@apphost/runtime';
import { batchConfig } from './governed.config';
import { GovernedOperationsModule } from './governed.module';
import { viewRpcPortsProvider } from './view-rpc/view-rpc-ports';

/**
 * governed-operations as a deployable unit: shared ephemeral state (confirmation permits) in Redis; model tool
 * batches (admission, confirmation, result pipeline, sealing, one appended event) and View operations (the View RPC,
 * its ports wired in `view-rpc/view-rpc-ports.ts`) over the bus (see README.md).
 */
export const governedOperationsService = defineService({
  name: 'governed-operations',
  requires: ['redis'],
  config: batchConfig,
  openStores: async (context) => [await openCoordinationStore(context)],
  imports: (context, stores) => {
    const [coordination] = stores as CoordinationStore[]; // openStores above opens exactly this one
    const ports = viewRpcPortsProvider(context.config, context.logger, coordination);
    return [GovernedOperationsModule.register(context.config, context.logger, coordination, context.config.INSTANCE_ID, ports)];
  },
});
