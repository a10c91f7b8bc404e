import { BusClient } from '@apphost/bus';
import { AppHostError, PROVIDER_KINDS, describeContract, type HostProfile, type ProviderReadiness } from '@apphost/contracts';

/**
 * PROFILE_BOUND needs every provider the profile references to answer `describe` as the service it names,
 * with a ready store of the expected namespace and revision when the profile pins them. Anything else —
 * no responder, a timeout, another namespace — leaves that provider absent and the binding MODEL_ONLY.
 */
export async function probeProviders(bus: BusClient, profile: HostProfile, timeoutMs: number): Promise<ProviderReadiness[]> {
  return Promise.all(
    PROVIDER_KINDS.map(async (provider): Promise<ProviderReadiness> => {
      const ref = profile.providers[provider];
      const base = { provider, service: ref.service };
      try {
        const described = await bus.request(describeContract(ref.service), {}, { timeoutMs });
        if (described.service !== ref.service) return { ...base, present: false, reason: 'WRONG_SERVICE' };
        if (ref.namespace === undefined && ref.revision === undefined) return { ...base, present: true };
        const store = described.stores.find((s) => ref.namespace === undefined || s.namespace === ref.namespace);
        if (!store) return { ...base, present: false, reason: 'NAMESPACE_MISMATCH' };
        if (ref.revision !== undefined && store.revision !== ref.revision) return { ...base, present: false, reason: 'REVISION_MISMATCH' };
        if (!store.ready) return { ...base, present: false, reason: 'NOT_READY' };
        return { ...base, present: true };
      } catch (error) {
        return { ...base, present: false, reason: error instanceof AppHostError ? error.code : 'INTERNAL' };
      }
    }),
  );
}
