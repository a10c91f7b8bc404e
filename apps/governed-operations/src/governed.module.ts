import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '@apphost/runtime';
import type { BatchConfig } from './batch/batch.config';
import { BATCH_CONFIG, BATCH_LOGGER } from './batch/batch.tokens';
import { CascadeHandlers } from './batch/cascade.handlers';
import { ToolBatchHandlers } from './batch/tool-batch.handlers';
import { ToolBatchService } from './batch/tool-batch.service';

@Module({})
export class GovernedOperationsModule {
  static register(config: BatchConfig, logger: Logger): DynamicModule {
    return {
      module: GovernedOperationsModule,
      providers: [{ provide: BATCH_CONFIG, useValue: config }, { provide: BATCH_LOGGER, useValue: logger }, ToolBatchService, ToolBatchHandlers, CascadeHandlers],
    };
  }
}
