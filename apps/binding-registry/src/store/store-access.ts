import { GenerationsRepository } from './generations.repository';
import { KeysRepository } from './keys.repository';
import { ProfilesRepository } from './profiles.repository';
import type { RegistryStore } from './registry-store';
import { ToolsetsRepository } from './toolsets.repository';

/** Every repository of the registry, over the store's one query API. */
export class RegistryStoreAccess {
  readonly profiles: ProfilesRepository;
  readonly toolsets: ToolsetsRepository;
  readonly generations: GenerationsRepository;
  readonly keys: KeysRepository;

  constructor(readonly store: RegistryStore) {
    this.profiles = new ProfilesRepository(store.database);
    this.toolsets = new ToolsetsRepository(store.database);
    this.generations = new GenerationsRepository(store.database);
    this.keys = new KeysRepository(store.database, store.database.schema);
  }
}
