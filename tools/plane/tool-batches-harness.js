"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.bootBatchPlane = bootBatchPlane;
exports.bindNonceToolset = bindNonceToolset;
const contracts_1 = require("@apphost/contracts");
const testing_1 = require("@apphost/testing");
const catalog_harness_1 = require("./catalog-harness");
const services_1 = require("./services");
/**
 * The plane of a model tool batch: lifecycle-store, sealed-result-store, binding-registry, catalog-policy,
 * governed-operations and the gateway, booted from their definitions (by path) on one NATS.
 */
async function bootBatchPlane(natsUrl, prefix, catalogEnv = {}, governedEnv = {}) {
    const definitions = (0, services_1.loadServiceDefinitions)();
    const byName = (name) => definitions.find((d) => d.name === name);
    const { services, stop } = await (0, testing_1.bootServices)(prefix, {
        lifecycle: { definition: byName('lifecycle-store'), env: { LIFECYCLE_CASCADE_PARTICIPANTS: 'governed-operations,sealed-result-store' } },
        sealed: { definition: byName('sealed-result-store'), env: { SEALED_GC_INTERVAL_MS: '0' } },
        registry: {
            definition: byName('binding-registry'),
            env: { REGISTRY_ALLOW_STDIO: 'true', REGISTRY_PROVIDER_TIMEOUT_MS: '1000', INSTANCE_ID: 'reg-batches' },
        },
        catalog: { definition: byName('catalog-policy'), env: catalogEnv },
        governed: { definition: byName('governed-operations'), env: governedEnv },
        gateway: { definition: byName('gateway'), env: catalog_harness_1.JWT_GATEWAY_ENV },
    }, { NATS_URL: natsUrl });
    return { ...services, base: (0, catalog_harness_1.baseUrlOf)(services.gateway), stop };
}
/** Binds the `stateful-nonce` fixture as toolset `nonce` under profile `p1`, the toolset most batch tests call. */
async function bindNonceToolset(registry) {
    await registry.client.request(contracts_1.RegistryPutProfile, { profileId: 'p1', profile: (0, catalog_harness_1.profile)() });
    const put = await registry.client.request(contracts_1.RegistryPutToolset, { toolsetId: 'nonce', spec: (0, catalog_harness_1.fixtureSpec)('stateful-nonce', 'p1') }, { timeoutMs: 30_000 });
    if (put.status.state !== 'PROFILE_BOUND')
        throw new Error(`toolset nonce is ${put.status.state}, not PROFILE_BOUND`);
}
//# sourceMappingURL=tool-batches-harness.js.map