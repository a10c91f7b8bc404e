import { bootServices, type ServiceUnderTest } from '@apphost/testing';
import { baseUrlOf, JWT_GATEWAY_ENV } from './catalog-harness';
import { loadServiceDefinitions } from './services';

export type ExportPlaneServices = Record<'lifecycle' | 'sealed' | 'exportAudit' | 'registry' | 'catalog' | 'governed' | 'gateway', ServiceUnderTest>;

export interface ExportPlane extends ExportPlaneServices {
  base: string;
  stop(): Promise<void>;
}

/**
 * The plane of an export: every service but a fake one — lifecycle-store (export-audit among its cascade
 * participants), sealed-result-store, export-audit, binding-registry, catalog-policy, governed-operations and the
 * gateway (JWT auth), booted from their definitions (by path) on one NATS.
 */
export async function bootExportPlane(
  natsUrl: string,
  prefix: string,
  appToolsets: Record<string, string>,
  registryEnv: Record<string, string> = {},
): Promise<ExportPlane> {
  const definitions = loadServiceDefinitions();
  const byName = (name: string) => definitions.find((d) => d.name === name)!;
  const catalogToolsets = Object.fromEntries(Object.entries(appToolsets).map(([app, toolsetId]) => [app, [{ toolsetId }]]));
  const { services, stop } = await bootServices(
    prefix,
    {
      lifecycle: { definition: byName('lifecycle-store'), env: { LIFECYCLE_CASCADE_PARTICIPANTS: 'governed-operations,sealed-result-store,export-audit' } },
      sealed: { definition: byName('sealed-result-store'), env: { SEALED_GC_INTERVAL_MS: '0' } },
      exportAudit: { definition: byName('export-audit'), env: { EXPORT_PURGE_INTERVAL_MS: '0' } },
      registry: {
        definition: byName('binding-registry'),
        env: { REGISTRY_ALLOW_STDIO: 'true', REGISTRY_PROVIDER_TIMEOUT_MS: '1000', INSTANCE_ID: 'reg-exports', ...registryEnv },
      },
      catalog: { definition: byName('catalog-policy'), env: { CATALOG_APP_TOOLSETS: JSON.stringify(catalogToolsets) } },
      governed: { definition: byName('governed-operations') },
      gateway: { definition: byName('gateway'), env: JWT_GATEWAY_ENV },
    },
    { NATS_URL: natsUrl },
  );
  const typed = services as ExportPlaneServices;
  return { ...typed, base: baseUrlOf(typed.gateway), stop };
}
