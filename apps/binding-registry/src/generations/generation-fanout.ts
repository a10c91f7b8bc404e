import { Inject, Injectable } from '@nestjs/common';
import { BusClient, isNoResponders } from '@apphost/bus';
import { ConnCloseBinding, ConnEndSession, type SessionKey } from '@apphost/contracts';
import { SERVICE_CONTEXT, type ServiceContext } from '@apphost/runtime';
import { RegistryStoreAccess } from '../store/store-access';
import { REGISTRY_INSTANCE, type RegistryInstance } from '../registry.tokens';
import { OwnedGenerations } from './owned-generations';

/** Fan-out to owners on their per-instance subjects: revocation closes a binding's generations, session deletion a session's. */
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

  /**
   * Ends the session's generations (up to `incarnation`) on every owner. An owner that no longer answers took its
   * processes with it; any other failure is raised, so the cascade step fails and is retried (a repeat is a no-op).
   */
  async endSession(session: SessionKey, incarnation: number): Promise<number> {
    const owners = new Set([this.instance.instanceId, ...(await this.store.generations.liveOwners())]);
    const counts = await Promise.all(
      [...owners].map(async (owner) => {
        if (owner === this.instance.instanceId) return this.owned.local.endSession(session, incarnation);
        try {
          return (await this.bus.request(ConnEndSession, { session, incarnation }, { instance: { id: owner, segment: 'conn' } })).ended;
        } catch (err) {
          if (!isNoResponders(err)) throw err;
          this.context.logger.warn({ err, owner }, 'session fan-out: the owner is gone, and its connections with it');
          return 0;
        }
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }
}
