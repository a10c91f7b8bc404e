import { Module, type DynamicModule } from '@nestjs/common';
import type { CoordinationStore } from '@apphost/coordination';
import { FAULT_POINTS, FaultPoints, type Logger } from '@apphost/runtime';
import type { BatchConfig } from './batch/batch.config';
import { BATCH_CONFIG, BATCH_LOGGER } from './batch/batch.tokens';
import { CallPipeline } from './batch/call-pipeline';
import { CascadeHandlers } from './batch/cascade.handlers';
import { ToolBatchHandlers } from './batch/tool-batch.handlers';
import { ToolBatchService } from './batch/tool-batch.service';
import { ConfirmationGate } from './confirmation/confirmation-gate';
import { ConfirmationPermits } from './confirmation/confirmation-permits';
import { ConfirmationService } from './confirmation/confirmation.service';

@Module({})
export class GovernedOperationsModule {
  static register(config: BatchConfig, logger: Logger, coordination: CoordinationStore): DynamicModule {
    return {
      module: GovernedOperationsModule,
      providers: [
        { provide: BATCH_CONFIG, useValue: config },
        { provide: BATCH_LOGGER, useValue: logger },
        { provide: FAULT_POINTS, useValue: new FaultPoints() },
        { provide: ConfirmationPermits, useValue: new ConfirmationPermits(coordination, config.confirmationRetentionMs) },
        CallPipeline,
        ConfirmationGate,
        ConfirmationService,
        ToolBatchService,
        ToolBatchHandlers,
        CascadeHandlers,
      ],
    };
  }
}
