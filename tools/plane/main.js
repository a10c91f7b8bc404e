"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
require("reflect-metadata");
const runtime_1 = require("@apphost/runtime");
const plane_config_1 = require("./plane-config");
const plane_1 = require("./plane");
/**
 * `npm start`: the whole plane in one process. Ctrl-C (or SIGTERM) stops it in order, the embedded database last
 * (it runs in its own process group, so the terminal's signal does not reach it); a second Ctrl-C forces the stop.
 * Data stays in APPHOST_HOME.
 */
async function main() {
    let config;
    try {
        config = (0, plane_config_1.parsePlaneConfig)(process.env);
    }
    catch (error) {
        process.stderr.write(`${error instanceof runtime_1.ConfigError ? error.message : String(error)}\n`);
        process.exit(2);
    }
    const plane = await (0, plane_1.startPlane)(config, process.env);
    process.stdout.write(`\nAppHost is running at ${plane.url}\n  development token: ${plane.tokenFile}\n  try: curl -H "Authorization: Bearer $(cat ${plane.tokenFile})" ${plane.url}/v1/services\n\n`);
    let stopping = false;
    const shutdown = (signal) => {
        if (stopping) {
            // A second Ctrl-C: give up on the orderly stop; the embedded database still gets its fast shutdown on exit.
            process.stdout.write(`\n${signal}: forcing the stop\n`);
            process.exit(130);
        }
        stopping = true;
        process.stdout.write(`\n${signal}: stopping AppHost (services, then the database; again to force)…\n`);
        plane.stop().then(() => process.exit(0), () => process.exit(1));
    };
    process.on('SIGINT', () => shutdown('SIGINT'));
    process.on('SIGTERM', () => shutdown('SIGTERM'));
}
main().catch((error) => {
    process.stderr.write(`AppHost failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
});
//# sourceMappingURL=main.js.map