import { Module, type DynamicModule } from '@nestjs/common';
import { FAULT_POINTS, FaultPoints } from '@apphost/runtime';
import { SealedCollector } from './sealed-collector';
import type { SealedConfig } from './sealed.config';
import type { SealedFaultPoint } from './sealed.faults';
import { SealedResultHandlers } from './sealed-result.handlers';
import { SealedResultService } from './sealed-result.service';
import type { SealedStore } from './sealed-store';
import { SEALED_CONFIG, SEALED_STORE } from './sealed.tokens';

@Module({})
export class SealedModule {
  static register(store: SealedStore, config: SealedConfig): DynamicModule {
    return {
      module: SealedModule,
      providers: [
        { provide: SEALED_STORE, useValue: store },
        { provide: SEALED_CONFIG, useValue: config },
        { provide: FAULT_POINTS, useValue: new FaultPoints<SealedFaultPoint>() },
        SealedResultService,
        SealedCollector,
        SealedResultHandlers,
      ],
      exports: [SealedResultService, SealedCollector, FAULT_POINTS],
    };
  }
}
