import { Module, type DynamicModule } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import type { CoordinationStore } from '@apphost/coordination';
import { FAULT_POINTS, FaultPoints, type Logger } from '@apphost/runtime';
import { CallClaims } from './calls/call-claims';
import { CallPipeline } from './calls/call-pipeline';
import { OwnerHeartbeat } from './calls/owner-heartbeat';
import { CascadeHandlers } from './cascade/cascade.handlers';
import { ConfirmationGate } from './confirmation/confirmation-gate';
import { ConfirmationPermits } from './confirmation/confirmation-permits';
import { ConfirmationHandlers } from './confirmation/confirmation.handlers';
import { ConfirmationService } from './confirmation/confirmation.service';
import type { BatchConfig } from './governed.config';
import type { GovernedFaultPoint } from './governed.faults';
import { BATCH_CONFIG, BATCH_LOGGER } from './governed.tokens';
import { BatchReplay } from './tool-batches/batch-replay';
import { ToolBatchHandlers } from './tool-batches/tool-batch.handlers';
import { ToolBatchService } from './tool-batches/tool-batch.service';
import { ProducingGenerations } from './views/producing-generations';
import { SessionLocks } from './views/session-locks';
import { ViewBootstrap } from './views/view-bootstrap';
import { ViewCollaborators } from './views/view-collaborators';
import { ViewHandlers } from './views/view.handlers';
import { ViewRecords } from './views/view-records';
import { ViewService } from './views/view.service';
import { ViewSweep } from './views/view-sweep';
import { ViewTeardown } from './views/view-teardown';

@Module({})
export class GovernedOperationsModule {
  static register(config: BatchConfig, logger: Logger, coordination: CoordinationStore, instanceId: string): DynamicModule {
    return {
      module: GovernedOperationsModule,
      providers: [
        { provide: BATCH_CONFIG, useValue: config },
        { provide: BATCH_LOGGER, useValue: logger },
        { provide: FAULT_POINTS, useValue: new FaultPoints<GovernedFaultPoint>() },
        { provide: ConfirmationPermits, useValue: new ConfirmationPermits(coordination, config.confirmationRetentionMs) },
        { provide: CallClaims, useValue: new CallClaims(coordination, config.callClaimTtlMs) },
        { provide: OwnerHeartbeat, useValue: new OwnerHeartbeat(coordination, instanceId, config.ownerHeartbeatMs, logger) },
        { provide: ProducingGenerations, useValue: new ProducingGenerations(coordination) },
        { provide: ViewRecords, useValue: new ViewRecords(coordination, config.views.closedRetentionMs) },
        { provide: SessionLocks, useValue: new SessionLocks(coordination) },
        {
          provide: ViewCollaborators,
          useFactory: (bus: BusClient) => new ViewCollaborators(bus, { readMs: config.views.readTimeoutMs }),
          inject: [BusClient],
        },
        {
          provide: ViewTeardown,
          useFactory: (records: ViewRecords, peers: ViewCollaborators, locks: SessionLocks) => new ViewTeardown(records, peers, locks, logger),
          inject: [ViewRecords, ViewCollaborators, SessionLocks],
        },
        {
          provide: ViewSweep,
          useFactory: (records: ViewRecords, teardown: ViewTeardown) => new ViewSweep(records, teardown, logger, config.views.sweepMs),
          inject: [ViewRecords, ViewTeardown],
        },
        ViewBootstrap,
        ViewService,
        ViewHandlers,
        CallPipeline,
        BatchReplay,
        ConfirmationGate,
        ConfirmationService,
        ConfirmationHandlers,
        ToolBatchService,
        ToolBatchHandlers,
        CascadeHandlers,
      ],
    };
  }
}
