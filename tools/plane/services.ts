import path from 'node:path';
import type { ServiceDefinition } from '@apphost/runtime';

/**
 * The plane composes the seven apps at run time, by path: apps never import each other, and the plane is
 * a deployment of them, not a library they depend on. Order matters: stores first, the gateway last (so it
 * only takes HTTP traffic once everything behind it answers) and, on shutdown, first to stop.
 */
const SERVICES = [
  ['lifecycle-store', 'lifecycleStoreService'],
  ['sealed-result-store', 'sealedResultStoreService'],
  ['export-audit', 'exportAuditService'],
  ['binding-registry', 'bindingRegistryService'],
  ['catalog-policy', 'catalogPolicyService'],
  ['governed-operations', 'governedOperationsService'],
  ['gateway', 'gatewayService'],
] as const;

export function loadServiceDefinitions(repoRoot: string): ServiceDefinition[] {
  return SERVICES.map(([app, exportName]) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = require(path.join(repoRoot, 'apps', app, 'src', 'service.ts')) as Record<string, ServiceDefinition>;
    const definition = loaded[exportName];
    if (!definition || definition.name !== app) throw new Error(`apps/${app}/src/service.ts does not export ${exportName}`);
    return definition;
  });
}
