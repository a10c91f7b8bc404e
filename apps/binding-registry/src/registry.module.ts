import { randomUUID } from 'node:crypto';
import { Module, type DynamicModule } from '@nestjs/common';
import type { Clock } from '@apphost/mcp';
import { FAULT_POINTS, FaultPoints } from '@apphost/runtime';
import { BindingService } from './bindings/binding.service';
import { BindingStateWaiter } from './bindings/binding-state-waiter';
import { ProfilesToolsetsService } from './bindings/profiles-toolsets.service';
import { GenerationFanout } from './generations/generation-fanout';
import { GenerationService } from './generations/generation.service';
import { OwnedGenerations } from './generations/owned-generations';
import { AdminHandlers } from './handlers/admin.handlers';
import { CascadeHandlers } from './handlers/cascade.handlers';
import { ConnectionHandlers } from './handlers/connection.handlers';
import { keyRingProvider } from './keys/key-ring.provider';
import type { RegistryConfig } from './registry.config';
import type { RegistryFaultPoint } from './registry.faults';
import { RegistryMetrics } from './registry.metrics';
import { REGISTRY_CLOCK, REGISTRY_CONFIG, REGISTRY_INSTANCE } from './registry.tokens';
import type { RegistryStore } from './store/registry-store';
import { RegistryStoreAccess } from './store/store-access';

@Module({})
export class RegistryModule {
  static register(store: RegistryStore, config: RegistryConfig, instanceId: string, clock: Clock): DynamicModule {
    return {
      module: RegistryModule,
      providers: [
        { provide: RegistryStoreAccess, useValue: new RegistryStoreAccess(store) },
        { provide: REGISTRY_CONFIG, useValue: config },
        { provide: FAULT_POINTS, useValue: new FaultPoints<RegistryFaultPoint>() },
        { provide: REGISTRY_INSTANCE, useValue: { instanceId, incarnation: randomUUID() } },
        { provide: REGISTRY_CLOCK, useValue: clock },
        keyRingProvider,
        RegistryMetrics,
        OwnedGenerations,
        GenerationFanout,
        BindingStateWaiter,
        BindingService,
        ProfilesToolsetsService,
        GenerationService,
        AdminHandlers,
        ConnectionHandlers,
        CascadeHandlers,
      ],
      exports: [BindingService, GenerationService, OwnedGenerations, FAULT_POINTS, REGISTRY_INSTANCE],
    };
  }
}
