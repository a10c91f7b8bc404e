"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.bootExportPlane = bootExportPlane;
const testing_1 = require("@apphost/testing");
const catalog_harness_1 = require("./catalog-harness");
const services_1 = require("./services");
/**
 * The plane of an export: every service but a fake one — lifecycle-store (export-audit among its cascade
 * participants), sealed-result-store, export-audit, binding-registry, catalog-policy, governed-operations and the
 * gateway (JWT auth), booted from their definitions (by path) on one NATS.
 */
async function bootExportPlane(natsUrl, prefix, appToolsets, registryEnv = {}) {
    const definitions = (0, services_1.loadServiceDefinitions)();
    const byName = (name) => definitions.find((d) => d.name === name);
    const catalogToolsets = Object.fromEntries(Object.entries(appToolsets).map(([app, toolsetId]) => [app, [{ toolsetId }]]));
    const { services, stop } = await (0, testing_1.bootServices)(prefix, {
        lifecycle: { definition: byName('lifecycle-store'), env: { LIFECYCLE_CASCADE_PARTICIPANTS: 'governed-operations,sealed-result-store,export-audit' } },
        sealed: { definition: byName('sealed-result-store'), env: { SEALED_GC_INTERVAL_MS: '0' } },
        exportAudit: { definition: byName('export-audit'), env: { EXPORT_PURGE_INTERVAL_MS: '0' } },
        registry: {
            definition: byName('binding-registry'),
            env: { REGISTRY_ALLOW_STDIO: 'true', REGISTRY_PROVIDER_TIMEOUT_MS: '1000', INSTANCE_ID: 'reg-exports', ...registryEnv },
        },
        catalog: { definition: byName('catalog-policy'), env: { CATALOG_APP_TOOLSETS: JSON.stringify(catalogToolsets) } },
        governed: { definition: byName('governed-operations') },
        gateway: { definition: byName('gateway'), env: catalog_harness_1.JWT_GATEWAY_ENV },
    }, { NATS_URL: natsUrl });
    const typed = services;
    return { ...typed, base: (0, catalog_harness_1.baseUrlOf)(typed.gateway), stop };
}
//# sourceMappingURL=exports-harness.js.map