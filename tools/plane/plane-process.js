"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.ENTRY = void 0;
exports.startPlane = startPlane;
exports.listServices = listServices;
const node_fs_1 = __importDefault(require("node:fs"));
const testing_1 = require("@apphost/testing");
/** The plane as a user meets it: `npm start` (tools/plane/main.ts) in its own process, nothing mocked. */
exports.ENTRY = 'tools/plane/main.ts';
async function startPlane(env) {
    const port = await (0, testing_1.freePort)();
    const child = (0, testing_1.spawnTs)(exports.ENTRY, { APPHOST_PORT: String(port), LOG_LEVEL: 'warn', ...env });
    const base = `http://127.0.0.1:${port}`;
    await (0, testing_1.eventually)(async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined), 60_000, 200).catch((error) => {
        child.kill('SIGKILL');
        throw new Error(`${error.message}\n${child.output().stdout}\n${child.output().stderr}`);
    });
    return { child, base };
}
async function listServices(base, tokenFile) {
    const token = node_fs_1.default.readFileSync(tokenFile, 'utf8').trim();
    const res = await fetch(`${base}/v1/services`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return (await res.json()).services;
}
//# sourceMappingURL=plane-process.js.map