"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.PrivateServer = void 0;
const node_child_process_1 = require("node:child_process");
const node_fs_1 = __importDefault(require("node:fs"));
const node_net_1 = __importDefault(require("node:net"));
const node_os_1 = __importDefault(require("node:os"));
const node_path_1 = __importDefault(require("node:path"));
const testing_1 = require("@apphost/testing");
/** A server of this suite alone (Redis or NATS) on a fixed loopback port, so it can be stopped and started again. */
class PrivateServer {
    constructor(name, port, argv) {
        this.name = name;
        this.port = port;
        this.argv = argv;
    }
    static async redis() {
        const port = await (0, testing_1.freePort)();
        return PrivateServer.started('redis', port, ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
    }
    static async nats() {
        const port = await (0, testing_1.freePort)();
        const store = node_fs_1.default.mkdtempSync(node_path_1.default.join(node_os_1.default.tmpdir(), 'apphost-faults-js-'));
        return PrivateServer.started('nats', port, ['/usr/sbin/nats-server', '-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store]);
    }
    static async started(name, port, argv) {
        const server = new PrivateServer(name, port, argv);
        await server.start();
        return server;
    }
    get url() {
        return `${this.name === 'redis' ? 'redis' : 'nats'}://127.0.0.1:${this.port}`;
    }
    /** Starts the server and waits until its port accepts connections (bounded). */
    async start() {
        const [command, ...args] = this.argv;
        this.child = (0, node_child_process_1.spawn)(command, args, { stdio: 'ignore' });
        await (0, testing_1.eventually)(() => accepts(this.port), 10_000, 50);
    }
    /** Stops it the way an orderly shutdown does (SIGTERM), or dead (`SIGKILL`). */
    async stop(signal = 'SIGTERM') {
        const child = this.child;
        if (!child || child.exitCode !== null || child.signalCode !== null)
            return;
        const exited = new Promise((resolve) => child.once('exit', () => resolve()));
        child.kill(signal);
        await exited;
    }
}
exports.PrivateServer = PrivateServer;
function accepts(port) {
    return new Promise((resolve) => {
        const socket = node_net_1.default.connect(port, '127.0.0.1');
        socket.once('connect', () => {
            socket.destroy();
            resolve(true);
        });
        socket.once('error', () => resolve(false));
    });
}
//# sourceMappingURL=private-servers.js.map