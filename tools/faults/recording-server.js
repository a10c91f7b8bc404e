"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
/**
 * A stdio MCP server whose one tool, `record`, appends its `key` (the caller's invocation/call id) to the file named
 * by `--record=<path>` before it answers, after `delayMs`: the fault suite counts executions per call id from it.
 *
 * Run: node -r ./tools/register.cjs tools/faults/recording-server.ts --record=/tmp/executions.log
 */
const node_fs_1 = __importDefault(require("node:fs"));
const server_1 = require("@modelcontextprotocol/server");
const stdio_1 = require("@modelcontextprotocol/server/stdio");
const zod_1 = require("zod");
const recordArg = process.argv.find((a) => a.startsWith('--record='))?.slice('--record='.length);
if (!recordArg) {
    process.stderr.write('recording-server: --record=<path> is required\n');
    process.exit(2);
}
const recordFile = recordArg;
function build() {
    const server = new server_1.McpServer({ name: 'apphost-fault-recorder', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.registerTool('record', {
        description: 'Records one execution of a call id.',
        inputSchema: zod_1.z.object({ key: zod_1.z.string().min(1).max(200), delayMs: zod_1.z.number().int().min(0).max(10_000).optional() }),
    }, async ({ key, delayMs }) => {
        // Recorded first: an execution counts even if the caller never sees its answer.
        node_fs_1.default.appendFileSync(recordFile, `${key}\n`);
        if (delayMs)
            await new Promise((r) => setTimeout(r, delayMs));
        return { content: [{ type: 'text', text: `recorded ${key}` }] };
    });
    return server;
}
const handle = (0, stdio_1.serveStdio)(build, { onerror: (error) => process.stderr.write(`[recording-server] ${error.message}\n`) });
const stop = () => void handle.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
//# sourceMappingURL=recording-server.js.map