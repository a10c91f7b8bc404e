"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.baseUrlOf = exports.JWT_GATEWAY_ENV = exports.matrixSpec = exports.publishedSpec = exports.fixtureSpec = exports.token = exports.JWT = void 0;
exports.profile = profile;
exports.bootCatalogPlane = bootCatalogPlane;
const node_path_1 = __importDefault(require("node:path"));
const jose_1 = require("jose");
const testing_1 = require("@apphost/testing");
const services_1 = require("./services");
exports.JWT = { issuer: 'https://issuer.catalog-e2e', audience: 'apphost-catalog-e2e', secret: 'a-catalog-e2e-secret-that-is-at-least-32-bytes' };
const token = (sub, scope = 'runtime admin', tenant = 'acme') => new jose_1.SignJWT({ tenant, scope })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(exports.JWT.issuer)
    .setAudience(exports.JWT.audience)
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(exports.JWT.secret));
exports.token = token;
/** A complete profile (no pinned namespaces): PROFILE_BOUND once the six providers answer `describe`. */
function profile(discovery = {}) {
    const ref = (service) => ({ service });
    return {
        extension: { mimeTypes: ['text/html;profile=mcp-app'] },
        hostCapabilities: { openLinks: true, serverTools: true, serverResources: true, logging: false },
        renderer: { id: 'apphost-reference-host', version: '1' },
        providers: {
            principalResolver: ref('gateway'),
            sessionAuthorizer: ref('governed-operations'),
            keyProvider: ref('binding-registry'),
            sealedResultStore: ref('sealed-result-store'),
            lifecycleStore: ref('lifecycle-store'),
            exportAuditStore: ref('export-audit'),
        },
        replayClassification: { source: 'profile', revision: '1' },
        callbackPolicy: { sampling: 'deny', elicitation: 'model-only', roots: 'deny' },
        connectionPolicy: { affinity: 'per-session', idleEvictMs: 60_000, maxLifetimeMs: 600_000 },
        resourcePolicy: { revision: '1', entries: [{ match: 'prefix', uri: 'ui://' }] },
        limits: {
            revision: '1',
            discovery: { maxPages: 8, maxItems: 2000, maxBytes: 1024 * 1024, maxTimeMs: 4000, ...discovery },
            mrtr: { maxRounds: 2, maxTotalMs: 30_000 },
            callTimeoutMs: 20_000,
            readTimeoutMs: 20_000,
        },
    };
}
const stdio = (cmd, profileId) => ({
    connection: { kind: 'stdio', command: cmd.command, args: cmd.args, cwd: cmd.cwd },
    profileId,
});
const fixtureSpec = (name, profileId, args = []) => stdio((0, testing_1.fixtureServerCommand)(name, args), profileId);
exports.fixtureSpec = fixtureSpec;
const publishedSpec = (server, profileId) => stdio((0, testing_1.publishedServerCommand)(server), profileId);
exports.publishedSpec = publishedSpec;
/** The catalog-matrix fixture (visibility cases, reserved names, `--count`, `--state-file` drift). */
const matrixSpec = (profileId, args = []) => stdio({
    command: process.execPath,
    args: ['-r', node_path_1.default.join(testing_1.REPO_ROOT, 'tools', 'register.cjs'), node_path_1.default.join(testing_1.REPO_ROOT, 'libs', 'testing', 'src', 'fixtures', 'catalog-matrix.ts'), ...args],
    cwd: testing_1.REPO_ROOT,
}, profileId);
exports.matrixSpec = matrixSpec;
/** gateway + lifecycle-store + binding-registry + catalog-policy, booted from their service definitions on one NATS. */
async function bootCatalogPlane(natsUrl, prefix, catalogEnv = {}) {
    const definitions = (0, services_1.loadServiceDefinitions)();
    const byName = (name) => definitions.find((d) => d.name === name);
    const { services, stop } = await (0, testing_1.bootServices)(prefix, {
        lifecycle: { definition: byName('lifecycle-store') },
        registry: {
            definition: byName('binding-registry'),
            env: { REGISTRY_ALLOW_STDIO: 'true', REGISTRY_PROVIDER_TIMEOUT_MS: '1000', INSTANCE_ID: 'reg-catalog' },
        },
        catalog: { definition: byName('catalog-policy'), env: catalogEnv },
        gateway: { definition: byName('gateway'), env: exports.JWT_GATEWAY_ENV },
    }, { NATS_URL: natsUrl });
    return { ...services, base: (0, exports.baseUrlOf)(services.gateway), stop };
}
/** The gateway's environment for JWT auth with `JWT` (the tokens `token()` signs). */
exports.JWT_GATEWAY_ENV = { AUTH_MODE: 'jwt', AUTH_JWT_ISSUER: exports.JWT.issuer, AUTH_JWT_AUDIENCE: exports.JWT.audience, AUTH_JWT_HS256_SECRET: exports.JWT.secret };
/** The gateway's HTTP base URL, on the IPv4 loopback. */
const baseUrlOf = (gateway) => gateway.running.url.replace('[::1]', '127.0.0.1');
exports.baseUrlOf = baseUrlOf;
//# sourceMappingURL=catalog-harness.js.map