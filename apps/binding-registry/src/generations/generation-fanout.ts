import { Inject, Injectable } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import { ConnCloseBinding } from '@apphost/contracts';
import { SERVICE_CONTEXT, type ServiceContext } from '@apphost/runtime';
import { RegistryStoreAccess } from '../store/store-access';
import { REGISTRY_INSTANCE, type RegistryInstance } from '../registry.tokens';
import { OwnedGenerations } from './owned-generations';

/** Revocation fan-out: every owner of a LIVE generation of the binding closes it on its own per-instance subject. */
@Injectable()
export class GenerationFanout {
  constructor(
    private readonly store: RegistryStoreAccess,
    private readonly bus: BusClient,
    private readonly owned: OwnedGenerations,
    @Inject(REGISTRY_INSTANCE) private readonly instance: RegistryInstance,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async closeBinding(toolsetId: string, bindingGeneration: number, scope: 'advertising' | 'all'): Promise<number> {
    const owners = await this.store.generations.ownersOf(toolsetId, bindingGeneration);
    const counts = await Promise.all(
      owners.map(async (owner) => {
        if (owner === this.instance.instanceId) return this.owned.local.closeBinding(toolsetId, bindingGeneration, scope);
        try {
          return (await this.bus.request(ConnCloseBinding, { toolsetId, bindingGeneration, scope }, { instance: { id: owner, segment: 'conn' } })).closed;
        } catch (err) {
          // A dead owner's connections died with it; its rows become GONE when its lease lapses.
          this.context.logger.warn({ err, owner, toolsetId, bindingGeneration }, 'revocation fan-out did not reach an owner');
          return 0;
        }
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }
}
