import { bootService, type ServiceUnderTest } from '@apphost/testing';
import { JWT } from './catalog-harness';
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
export async function bootBatchPlane(natsUrl: string, prefix: string, catalogEnv: Record<string, string> = {}, governedEnv: Record<string, string> = {}): Promise<BatchPlane> {
  const definitions = loadServiceDefinitions();
  const byName = (name: string) => definitions.find((d) => d.name === name)!;
  const started: ServiceUnderTest[] = [];
  const boot = async (name: string, extra: Record<string, string> = {}) => {
    const s = await bootService(byName(name), prefix, { NATS_URL: natsUrl, ...extra });
    started.push(s);
    return s;
  };
  try {
    const lifecycle = await boot('lifecycle-store', { LIFECYCLE_CASCADE_PARTICIPANTS: 'governed-operations,sealed-result-store' });
    const sealed = await boot('sealed-result-store', { SEALED_GC_INTERVAL_MS: '0' });
    const registry = await boot('binding-registry', { REGISTRY_ALLOW_STDIO: 'true', REGISTRY_PROVIDER_TIMEOUT_MS: '1000', INSTANCE_ID: 'reg-batches' });
    const catalog = await boot('catalog-policy', catalogEnv);
    const governed = await boot('governed-operations', governedEnv);
    const gateway = await boot('gateway', { AUTH_MODE: 'jwt', AUTH_JWT_ISSUER: JWT.issuer, AUTH_JWT_AUDIENCE: JWT.audience, AUTH_JWT_HS256_SECRET: JWT.secret });
    return {
      lifecycle,
      sealed,
      registry,
      catalog,
      governed,
      gateway,
      base: gateway.running.url!.replace('[::1]', '127.0.0.1'),
      stop: async () => {
        for (const s of started.reverse()) await s.stop();
      },
    };
  } catch (error) {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
    throw error;
  }
}
