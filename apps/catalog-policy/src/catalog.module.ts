import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '@apphost/runtime';
import type { CatalogConfig } from './catalog.config';
import { CATALOG_CONFIG, CATALOG_LOGGER } from './catalog.tokens';
import { CatalogService } from './discovery/catalog.service';
import { RegistryDiscovery } from './discovery/registry-client';
import { CatalogHandlers } from './handlers/catalog.handlers';
import { PinningService } from './pinning/pinning.service';
import type { CatalogStore } from './store/catalog-store';
import { PinsRepository } from './store/pins.repository';

@Module({})
export class CatalogModule {
  static register(store: CatalogStore, config: CatalogConfig, logger: Logger): DynamicModule {
    return {
      module: CatalogModule,
      providers: [
        { provide: PinsRepository, useValue: new PinsRepository(store.database) },
        { provide: CATALOG_CONFIG, useValue: config },
        { provide: CATALOG_LOGGER, useValue: logger },
        RegistryDiscovery,
        PinningService,
        CatalogService,
        CatalogHandlers,
      ],
    };
  }
}
