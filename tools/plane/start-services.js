"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
require("reflect-metadata");
const runtime_1 = require("@apphost/runtime");
const service_processes_1 = require("./service-processes");
/**
 * `npm run start:services`: the seven services as seven processes (as deployed) on NATS_URL, DATABASE_URL and
 * REDIS_URL, the gateway on APPHOST_PORT. Ctrl-C stops them in order, gateway first; a second Ctrl-C kills them.
 */
async function main() {
    let config;
    try {
        config = (0, service_processes_1.parseServicesConfig)(process.env);
    }
    catch (error) {
        process.stderr.write(`${error instanceof runtime_1.ConfigError ? error.message : String(error)}\n`);
        process.exit(2);
    }
    const say = (line) => process.stdout.write(`${line}\n`);
    const services = await (0, service_processes_1.startServiceProcesses)(config, process.env, say);
    say(`AppHost services are running; gateway at http://${config.APPHOST_HOST}:${config.APPHOST_PORT}`);
    let stopping = false;
    const shutdown = (signal) => {
        say(`${signal}: ${stopping ? 'killing the services' : 'stopping the services, gateway first (again to force)'}`);
        const force = stopping;
        stopping = true;
        services.stop(force).then(() => process.exit(0), () => process.exit(1));
    };
    process.on('SIGINT', () => shutdown('SIGINT'));
    process.on('SIGTERM', () => shutdown('SIGTERM'));
}
main().catch((error) => {
    process.stderr.write(`AppHost services failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
});
//# sourceMappingURL=start-services.js.map