import { bindingRegistryService } from '@apphost/app-binding-registry';
import { catalogPolicyService } from '@apphost/app-catalog-policy';
import { exportAuditService } from '@apphost/app-export-audit';
import { gatewayService } from '@apphost/app-gateway';
import { governedOperationsService } from '@apphost/app-governed-operations';
import { lifecycleStoreService } from '@apphost/app-lifecycle-store';
import { sealedResultStoreService } from '@apphost/app-sealed-result-store';
import type { ServiceDefinition } from '@apphost/runtime';

/**
 * The plane composes the seven apps, each through its service definition (`@apphost/app-<name>`, which maps to
 * apps/<name>/src/service.ts). The imports are static so the project graph knows the plane depends on every app;
 * only the tools project may use these aliases (eslint.config.cjs), apps never import each other. Order matters:
 * stores first, the gateway last (so it only takes HTTP traffic once everything behind it answers) and, on
 * shutdown, first to stop.
 */
const SERVICES: readonly ServiceDefinition[] = [
  lifecycleStoreService,
  sealedResultStoreService,
  exportAuditService,
  bindingRegistryService,
  catalogPolicyService,
  governedOperationsService,
  gatewayService,
];

/** The seven service definitions in start order (a fresh array: callers may filter or reorder it). */
export function loadServiceDefinitions(): ServiceDefinition[] {
  return [...SERVICES];
}
