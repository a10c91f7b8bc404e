"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.startPlane = startPlane;
const node_crypto_1 = require("node:crypto");
const node_fs_1 = __importDefault(require("node:fs"));
const node_path_1 = __importDefault(require("node:path"));
const bus_1 = require("@apphost/bus");
const persistence_1 = require("@apphost/persistence");
const runtime_1 = require("@apphost/runtime");
const services_1 = require("./services");
/**
 * Every service in one process: the in-process bus, embedded PostgreSQL in `<home>/pg` and the in-memory
 * coordination store, unless NATS_URL, DATABASE_URL or REDIS_URL point at real ones.
 */
async function startPlane(config, env) {
    // Searchable (not listable) by others: when run as root, PostgreSQL runs as the postgres user and keeps its data in
    // <home>/pg if it can reach it, else under /var/lib/apphost, recorded in <home>/pg.location.
    node_fs_1.default.mkdirSync(config.home, { recursive: true, mode: 0o711 });
    node_fs_1.default.chmodSync(config.home, 0o711);
    const instanceId = `plane-${(0, node_crypto_1.randomBytes)(3).toString('hex')}`;
    const logger = (0, runtime_1.createLogger)('plane', instanceId, config.LOG_LEVEL);
    const cleanups = [];
    const running = [];
    let database;
    // Reverse start order (gateway first), then the bus and tracing, the database last: services record their
    // state in it while they stop.
    const stop = async () => {
        for (const service of running.reverse())
            await service.close().catch((err) => logger.error({ err }, `${service.name} did not stop cleanly`));
        for (const cleanup of cleanups.reverse())
            await cleanup().catch((err) => logger.error({ err }, 'cleanup failed'));
        await database?.stop().catch((err) => logger.error({ err }, 'embedded postgres did not stop cleanly'));
    };
    try {
        const tracing = (0, runtime_1.startTracing)('apphost-plane', config);
        cleanups.push(() => tracing.shutdown());
        const transport = config.NATS_URL
            ? await bus_1.NatsTransport.connect({ servers: config.NATS_URL.split(','), name: `apphost-plane/${instanceId}`, subjectPrefix: config.BUS_SUBJECT_PREFIX })
            : new bus_1.InProcessTransport(undefined, config.BUS_SUBJECT_PREFIX);
        cleanups.push(() => transport.close());
        let databaseUrl = config.DATABASE_URL;
        if (!databaseUrl) {
            database = await (0, persistence_1.startEmbeddedPostgres)({ dataDir: node_path_1.default.join(config.home, 'pg'), logger });
            databaseUrl = database.url;
        }
        const tokenFile = node_path_1.default.join(config.home, 'dev-token');
        const serviceEnv = {
            ...env,
            DATABASE_URL: databaseUrl,
            REDIS_URL: config.REDIS_URL,
            INSTANCE_ID: instanceId,
            LOG_LEVEL: config.LOG_LEVEL,
            HTTP_HOST: config.APPHOST_HOST,
            HTTP_PORT: String(config.APPHOST_PORT),
            AUTH_MODE: env.AUTH_MODE ?? 'development',
            AUTH_DEV_TOKEN_FILE: env.AUTH_DEV_TOKEN_FILE ?? tokenFile,
            // Deleting a session purges what the other stores keep for it (each service that keeps session state is a participant);
            // binding-registry ends the session's MCP connections, so their server processes exit at once.
            LIFECYCLE_CASCADE_PARTICIPANTS: env.LIFECYCLE_CASCADE_PARTICIPANTS ?? 'governed-operations,sealed-result-store,export-audit,binding-registry',
        };
        let url = '';
        for (const definition of (0, services_1.loadServiceDefinitions)()) {
            const isGateway = definition.name === 'gateway';
            const service = await (0, runtime_1.startService)(definition, { env: serviceEnv, transport, http: isGateway, processMetrics: isGateway, logger });
            running.push(service);
            if (isGateway)
                url = service.url.replace('[::1]', 'localhost');
        }
        return { url, tokenFile: serviceEnv.AUTH_DEV_TOKEN_FILE, stop };
    }
    catch (error) {
        await stop();
        throw error;
    }
}
//# sourceMappingURL=plane.js.map