import type { FactoryProvider } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import type { CoordinationStore } from '@apphost/coordination';
import type { Logger } from '@apphost/runtime';
import { SealedResultClient } from '@apphost/sealed-results';
import type { BatchConfig } from '../governed.config';
import { VIEW_RPC_PORTS } from '../governed.tokens';
import { ViewRecords } from '../views/view-records';
import { ViewTeardown } from '../views/view-teardown';
import { AppAudit } from './app-audit';
import { InFlightOperations } from './in-flight-operations';
import type { ViewRpcPorts } from './ports';
import { RpcMessageAdmission } from './rpc-admission';
import { RpcLimiter } from './rpc-limiter';
import { ViewIdempotency } from './view-idempotency';
import { ViewNotifications } from './view-notifications';

/** The View RPC's ports as the deployed service runs them: every shared state in the coordination store (Redis). */
export function viewRpcPortsProvider(
  config: BatchConfig,
  logger: Logger,
  coordination: CoordinationStore,
): FactoryProvider<ViewRpcPorts> & { provide: typeof VIEW_RPC_PORTS } {
  return {
    provide: VIEW_RPC_PORTS,
    useFactory: (bus: BusClient, records: ViewRecords, teardown: ViewTeardown): ViewRpcPorts => ({
      admission: new RpcMessageAdmission(),
      limiter: new RpcLimiter(coordination),
      inFlight: new InFlightOperations(coordination, bus, logger),
      idempotency: new ViewIdempotency(coordination),
      audit: new AppAudit(bus, new SealedResultClient(bus, { timeoutMs: config.storeTimeoutMs }), coordination, logger, {
        timeoutMs: config.storeTimeoutMs,
        ...(config.pendingTtlMs !== undefined ? { pendingTtlMs: config.pendingTtlMs } : {}),
      }),
      notifications: new ViewNotifications(records, teardown, logger),
    }),
    inject: [BusClient, ViewRecords, ViewTeardown],
  };
}
