import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { parseConfig } from '@apphost/runtime';
import { loadServiceDefinitions } from './services';

const REPO_ROOT = path.join(__dirname, '..', '..');
const READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 20_000;
/** A service that exits on its own is restarted (as a pod would be), at most this often. */
const RESTART_DELAY_MS = 500;
/** Exit code of a standalone service on bad configuration: restarting cannot help. */
const CONFIG_EXIT_CODE = 2;

/** `npm run start:services`: every service as its own process on the stores the environment names. */
const servicesConfigSchema = z.object({
  NATS_URL: z.string({ error: 'required: the NATS every service connects to' }).min(1),
  DATABASE_URL: z.string({ error: 'required: the PostgreSQL the stores use' }).min(1),
  REDIS_URL: z.string({ error: 'required: the Redis the coordination store uses' }).min(1),
  APPHOST_HOST: z.string().min(1).default('127.0.0.1'),
  APPHOST_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  APPHOST_HOME: z.string().min(1).default('.apphost'),
});
export type ServicesConfig = z.infer<typeof servicesConfigSchema>;

export function parseServicesConfig(env: Record<string, string | undefined>): ServicesConfig {
  return parseConfig('apphost services', servicesConfigSchema, env);
}

export interface ServiceProcess {
  name: string;
  pid: number;
  probePort: number;
}

export interface ServiceProcesses {
  processes(): ServiceProcess[];
  /** Stops the services one at a time in reverse start order (gateway first); `force` kills what is left. */
  stop(force?: boolean): Promise<void>;
}

type Report = (line: string) => void;

/**
 * Starts the seven services (apps/<name>/src/main.ts) in their own process group each, so a terminal's Ctrl-C
 * reaches only this launcher and the stop keeps its order. The stores come up first, the gateway last.
 */
export async function startServiceProcesses(config: ServicesConfig, env: Record<string, string | undefined>, report: Report): Promise<ServiceProcesses> {
  const home = path.resolve(config.APPHOST_HOME);
  const common = {
    ...env,
    NATS_URL: config.NATS_URL,
    DATABASE_URL: config.DATABASE_URL,
    REDIS_URL: config.REDIS_URL,
    HTTP_HOST: config.APPHOST_HOST,
    AUTH_MODE: env.AUTH_MODE ?? 'development',
    AUTH_DEV_TOKEN_FILE: env.AUTH_DEV_TOKEN_FILE ?? path.join(home, 'dev-token'),
    LIFECYCLE_CASCADE_PARTICIPANTS: env.LIFECYCLE_CASCADE_PARTICIPANTS ?? 'governed-operations,sealed-result-store,export-audit',
  };
  const supervised: Supervised[] = [];
  let stopping = false;
  const definitions = loadServiceDefinitions();
  const launch = async (name: string, probePort: number) => {
    const service = new Supervised(name, probePort, { ...common, HTTP_PORT: String(probePort) }, report, () => stopping);
    supervised.push(service);
    service.start();
    await service.ready();
  };
  // Children have their own process groups: if this launcher dies unasked, they must not outlive it.
  process.once('exit', () => supervised.forEach((s) => s.kill()));
  const stop = async (force = false) => {
    stopping = true;
    for (const service of [...supervised].reverse()) await service.stop(force);
  };
  try {
    const stores = definitions.filter((d) => d.name !== 'gateway');
    await Promise.all(stores.map(async (d) => launch(d.name, await freePort(config.APPHOST_HOST))));
    await launch('gateway', config.APPHOST_PORT);
  } catch (error) {
    await stop(true);
    throw error;
  }
  return { processes: () => supervised.map((s) => ({ name: s.name, pid: s.pid, probePort: s.probePort })), stop };
}

/** One service process, restarted when it exits unasked (unless its configuration is bad). */
class Supervised {
  private child?: ChildProcess;
  private exited = Promise.resolve();
  pid = -1;

  constructor(
    readonly name: string,
    readonly probePort: number,
    private readonly env: Record<string, string | undefined>,
    private readonly report: Report,
    private readonly stopping: () => boolean,
  ) {}

  start(): void {
    const entry = path.join(REPO_ROOT, 'apps', this.name, 'src', 'main.ts');
    const child = spawn(process.execPath, ['-r', path.join(REPO_ROOT, 'tools', 'register.cjs'), entry], {
      cwd: REPO_ROOT,
      env: this.env,
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    this.child = child;
    this.pid = child.pid ?? -1;
    this.report(`${this.name} pid ${this.pid} probe ${this.env.HTTP_HOST}:${this.probePort}`);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        resolve();
        if (this.stopping() || this.child !== child) return;
        this.report(`${this.name} pid ${child.pid} exited (${signal ?? code})`);
        if (code === CONFIG_EXIT_CODE) return;
        setTimeout(() => this.stopping() || this.start(), RESTART_DELAY_MS);
      }),
    );
  }

  /** Resolves once the probe port answers /healthz; fails if the process exits first or the bound passes. */
  async ready(): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (this.child?.exitCode !== null) throw new Error(`${this.name} exited with ${this.child?.exitCode} before it was ready`);
      const ok = await fetch(`http://${this.env.HTTP_HOST}:${this.probePort}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`${this.name} was not healthy within ${READY_TIMEOUT_MS} ms`);
  }

  kill(): void {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  async stop(force: boolean): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(force ? 'SIGKILL' : 'SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await this.exited;
    clearTimeout(timer);
    this.report(`${this.name} stopped`);
  }
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const port = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(port));
    });
  });
}
