"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.loadServiceDefinitions = loadServiceDefinitions;
const app_binding_registry_1 = require("@apphost/app-binding-registry");
const app_catalog_policy_1 = require("@apphost/app-catalog-policy");
const app_export_audit_1 = require("@apphost/app-export-audit");
const app_gateway_1 = require("@apphost/app-gateway");
const app_governed_operations_1 = require("@apphost/app-governed-operations");
const app_lifecycle_store_1 = require("@apphost/app-lifecycle-store");
const app_sealed_result_store_1 = require("@apphost/app-sealed-result-store");
/**
 * The plane composes the seven apps, each through its service definition (`@apphost/app-<name>`, which maps to
 * apps/<name>/src/service.ts). The imports are static so the project graph knows the plane depends on every app;
 * only the tools project may use these aliases (eslint.config.cjs), apps never import each other. Order matters:
 * stores first, the gateway last (so it only takes HTTP traffic once everything behind it answers) and, on
 * shutdown, first to stop.
 */
const SERVICES = [
    app_lifecycle_store_1.lifecycleStoreService,
    app_sealed_result_store_1.sealedResultStoreService,
    app_export_audit_1.exportAuditService,
    app_binding_registry_1.bindingRegistryService,
    app_catalog_policy_1.catalogPolicyService,
    app_governed_operations_1.governedOperationsService,
    app_gateway_1.gatewayService,
];
/** The seven service definitions in start order (a fresh array: callers may filter or reorder it). */
function loadServiceDefinitions() {
    return [...SERVICES];
}
//# sourceMappingURL=services.js.map