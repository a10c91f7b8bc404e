import { RegistryPutProfile, RegistryPutToolset } from '@apphost/contracts';
import { bootServices, type ServiceUnderTest } from '@apphost/testing';
import { baseUrlOf, fixtureSpec, JWT_GATEWAY_ENV, profile } from './catalog-harness';
import { loadServiceDefinitions } from './services';

export interface BatchPlane {
  lifecycle: ServiceUnderTest;
  sealed: ServiceUnderTest;
  registry: ServiceUnderTest;
  catalog: ServiceUnderTest;
  governed: ServiceUnderTest;
  gateway: ServiceUnderTest;
  base: string;
  stop(): Promise<void>;
}

/**
 * The plane of a model tool batch: lifecycle-store, sealed-result-store, binding-registry, catalog-policy,
 * governed-operations and the gateway, booted from their definitions (by path) on one NATS.
 */
export async function bootBatchPlane(
  natsUrl: string,
  prefix: string,
  catalogEnv: Record<string, string> = {},
  governedEnv: Record<string, string> = {},
): Promise<BatchPlane> {
  const definitions = loadServiceDefinitions();
  const byName = (name: string) => definitions.find((d) => d.name === name)!;
  const { services, stop } = await bootServices(
    prefix,
    {
      lifecycle: { definition: byName('lifecycle-store'), env: { LIFECYCLE_CASCADE_PARTICIPANTS: 'governed-operations,sealed-result-store' } },
      sealed: { definition: byName('sealed-result-store'), env: { SEALED_GC_INTERVAL_MS: '0' } },
      registry: {
        definition: byName('binding-registry'),
        env: { REGISTRY_ALLOW_STDIO: 'true', REGISTRY_PROVIDER_TIMEOUT_MS: '1000', INSTANCE_ID: 'reg-batches' },
      },
      catalog: { definition: byName('catalog-policy'), env: catalogEnv },
      governed: { definition: byName('governed-operations'), env: governedEnv },
      gateway: { definition: byName('gateway'), env: JWT_GATEWAY_ENV },
    },
    { NATS_URL: natsUrl },
  );
  return { ...services, base: baseUrlOf(services.gateway), stop };
}

/** Binds the `stateful-nonce` fixture as toolset `nonce` under profile `p1`, the toolset most batch tests call. */
export async function bindNonceToolset(registry: ServiceUnderTest): Promise<void> {
  await registry.client.request(RegistryPutProfile, { profileId: 'p1', profile: profile() });
  const put = await registry.client.request(RegistryPutToolset, { toolsetId: 'nonce', spec: fixtureSpec('stateful-nonce', 'p1') }, { timeoutMs: 30_000 });
  if (put.status.state !== 'PROFILE_BOUND') throw new Error(`toolset nonce is ${put.status.state}, not PROFILE_BOUND`);
}
