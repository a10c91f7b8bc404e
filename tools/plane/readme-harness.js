"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.ReadmeFlow = void 0;
exports.vanillaToolset = vanillaToolset;
const node_fs_1 = __importDefault(require("node:fs"));
const node_path_1 = __importDefault(require("node:path"));
const testing_1 = require("@apphost/testing");
/**
 * The README walkthrough's HTTP calls (profile, toolsets, session, catalog, batch) as a small client, so e2e and fault
 * tests drive the plane the way a runtime does. Every call has a deadline (`deadlineMs`).
 */
class ReadmeFlow {
    constructor(base, tokenFile, 
    /** The deadline the plane is given (`x-apphost-timeout-ms`); the client gives up a little after it. */
    deadlineMs = 10_000) {
        this.base = base;
        this.tokenFile = tokenFile;
        this.deadlineMs = deadlineMs;
    }
    async request(method, route, body) {
        const token = node_fs_1.default.readFileSync(this.tokenFile, 'utf8').trim();
        const res = await fetch(`${this.base}${route}`, {
            method,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-apphost-timeout-ms': String(this.deadlineMs) },
            body: body === undefined ? undefined : JSON.stringify(body),
            signal: AbortSignal.timeout(this.deadlineMs + 5_000),
        });
        const text = await res.text();
        return { status: res.status, body: (text ? JSON.parse(text) : {}) };
    }
    /** The demo profile and the given toolsets (id → toolset body); each must end PROFILE_BOUND. */
    async setUp(toolsets) {
        const profile = JSON.parse(node_fs_1.default.readFileSync(node_path_1.default.join(testing_1.REPO_ROOT, 'examples', 'demo-profile.json'), 'utf8'));
        expectOk(await this.request('PUT', '/v1/profiles/demo', profile), 'profile');
        for (const [id, toolset] of Object.entries(toolsets))
            expectOk(await this.request('PUT', `/v1/toolsets/${id}`, toolset), `toolset ${id}`);
    }
    /** `creationOperationId` is the create's idempotency key: a retry with the same one completes that creation. */
    openSession(sessionId, creationOperationId) {
        return this.request('POST', '/v1/sessions', { appName: 'demo', sessionId, ...(creationOperationId ? { creationOperationId } : {}) });
    }
    deleteSession(sessionId) {
        return this.request('DELETE', `/v1/sessions/${sessionId}?appName=demo`);
    }
    catalog(sessionId) {
        return this.request('GET', `/v1/sessions/${sessionId}/catalog?appName=demo`);
    }
    batch(sessionId, invocationId, calls) {
        return this.request('POST', `/v1/sessions/${sessionId}/tool-batches`, { appName: 'demo', invocationId, calls });
    }
    events(sessionId) {
        return this.request('GET', `/v1/sessions/${sessionId}/events?appName=demo`);
    }
}
exports.ReadmeFlow = ReadmeFlow;
function expectOk(reply, what) {
    if (reply.status >= 300)
        throw new Error(`${what}: HTTP ${reply.status} ${JSON.stringify(reply.body)}`);
}
/** The README's toolset of the published basic-vanillajs server, over stdio. */
function vanillaToolset() {
    return JSON.parse(node_fs_1.default.readFileSync(node_path_1.default.join(testing_1.REPO_ROOT, 'examples', 'vanilla-toolset.json'), 'utf8'));
}
//# sourceMappingURL=readme-harness.js.map