import { Module, type DynamicModule, type FactoryProvider, type ValueProvider } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import type { CoordinationStore } from '@apphost/coordination';
import { FAULT_POINTS, FaultPoints, SERVICE_CONTEXT, type Logger, type ServiceContext } from '@apphost/runtime';
import { SealedResultClient } from '@apphost/sealed-results';
import { CallClaims } from './calls/call-claims';
import { CallPipeline } from './calls/call-pipeline';
import { OwnerHeartbeat } from './calls/owner-heartbeat';
import { SealedCommits } from './calls/sealed-commits';
import { CascadeHandlers } from './cascade/cascade.handlers';
import { ConfirmationGate } from './confirmation/confirmation-gate';
import { ConfirmationPermits } from './confirmation/confirmation-permits';
import { ConfirmationHandlers } from './confirmation/confirmation.handlers';
import { ConfirmationService } from './confirmation/confirmation.service';
import { ContextRegisters } from './conversation/context-registers';
import { ConversationHandlers } from './conversation/conversation.handlers';
import { ModelContext } from './conversation/model-context';
import { MessageClaimHandlers } from './conversation/message-claims.handlers';
import { MessageClaims } from './conversation/message-claims';
import { InvocationOrigins } from './conversation/invocation-origins';
import { ViewMessages } from './conversation/view-messages';
import type { BatchConfig } from './governed.config';
import type { GovernedFaultPoint } from './governed.faults';
import { GovernedMetrics } from './governed.metrics';
import { BATCH_CONFIG, BATCH_LOGGER, VIEW_RPC_PORTS } from './governed.tokens';
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
import { ArgumentSchemas } from './view-rpc/argument-schemas';
import type { ViewRpcPorts } from './view-rpc/ports';
import { MinuteWindows } from './view-rpc/rpc-limiter';
import { viewRpcPortsProvider } from './view-rpc/view-rpc.ports';
import { ViewBarrier } from './view-rpc/view-barrier';
import { ViewOperations } from './view-rpc/view-operations';
import { ViewRpcHandlers } from './view-rpc/view-rpc.handlers';
import { ViewRpcService } from './view-rpc/view-rpc.service';

@Module({})
export class GovernedOperationsModule {
  /** `viewRpcPorts` replaces the View RPC's ports (`view-rpc/ports.ts`; default `viewRpcPortsProvider`): specs give their own. */
  static register(
    config: BatchConfig,
    logger: Logger,
    coordination: CoordinationStore,
    instanceId: string,
    viewRpcPorts?: (ValueProvider<ViewRpcPorts> | FactoryProvider<ViewRpcPorts>) & { provide: typeof VIEW_RPC_PORTS },
  ): DynamicModule {
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
          useFactory: (bus: BusClient) => new ViewCollaborators(bus, { readMs: config.views.readTimeoutMs }, logger),
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
        {
          provide: ViewBarrier,
          useFactory: (bus: BusClient, records: ViewRecords, peers: ViewCollaborators, teardown: ViewTeardown) =>
            new ViewBarrier(bus, records, peers, teardown, new ArgumentSchemas(), logger),
          inject: [BusClient, ViewRecords, ViewCollaborators, ViewTeardown],
        },
        {
          provide: ViewOperations,
          useFactory: (bus: BusClient, peers: ViewCollaborators, barrier: ViewBarrier) => new ViewOperations(bus, peers, barrier, logger),
          inject: [BusClient, ViewCollaborators, ViewBarrier],
        },
        {
          provide: ContextRegisters,
          useFactory: (records: ViewRecords, peers: ViewCollaborators, teardown: ViewTeardown) => new ContextRegisters(records, peers, teardown, logger),
          inject: [ViewRecords, ViewCollaborators, ViewTeardown],
        },
        {
          provide: ModelContext,
          useFactory: (bus: BusClient, records: ViewRecords, peers: ViewCollaborators, teardown: ViewTeardown) =>
            new ModelContext(bus, records, peers, teardown, logger),
          inject: [BusClient, ViewRecords, ViewCollaborators, ViewTeardown],
        },
        ConversationHandlers,
        {
          provide: ViewMessages,
          useFactory: (bus: BusClient, barrier: ViewBarrier, faults: FaultPoints<GovernedFaultPoint>) =>
            new ViewMessages(bus, barrier, new MinuteWindows(coordination), config.messages, faults, logger),
          inject: [BusClient, ViewBarrier, FAULT_POINTS],
        },
        viewRpcPorts ?? viewRpcPortsProvider(config, logger, coordination),
        ViewRpcService,
        ViewRpcHandlers,
        { provide: GovernedMetrics, useFactory: (context: ServiceContext) => new GovernedMetrics(context.metrics.registry), inject: [SERVICE_CONTEXT] },
        {
          provide: SealedCommits,
          // A commit is one store request: shutdown waits for the in-flight ones at most that long.
          useFactory: (bus: BusClient, faults: FaultPoints<GovernedFaultPoint>, metrics: GovernedMetrics) =>
            new SealedCommits(new SealedResultClient(bus, { timeoutMs: config.storeTimeoutMs }), faults, metrics, logger, config.storeTimeoutMs),
          inject: [BusClient, FAULT_POINTS, GovernedMetrics],
        },
        CallPipeline,
        BatchReplay,
        ConfirmationGate,
        ConfirmationService,
        ConfirmationHandlers,
        { provide: InvocationOrigins, useFactory: (bus: BusClient) => new InvocationOrigins(bus), inject: [BusClient] },
        ToolBatchService,
        ToolBatchHandlers,
        CascadeHandlers,
        {
          provide: MessageClaims,
          useFactory: (bus: BusClient, peers: ViewCollaborators) => new MessageClaims(bus, peers, logger),
          inject: [BusClient, ViewCollaborators],
        },
        MessageClaimHandlers,
      ],
    };
  }
}
