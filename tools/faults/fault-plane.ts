import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BusClient, type NatsTransport } from '@apphost/bus';
import {
  connectTestTransport,
  dropSchemasWithPrefix,
  eventually,
  freePort,
  PrivateServer,
  REPO_ROOT,
  spawnTs,
  startTcpProxy,
  TEST_DATABASE_URL,
  uniquePrefix,
  type TcpProxy,
} from '@apphost/testing';
import { ReadmeFlow, vanillaToolset, type Reply } from '../plane/readme-harness';

const LAUNCHER = 'tools/plane/start-services.ts';
const STARTED_LINE = /^(\S+) pid (\d+) probe (\S+):(\d+)$/m;
const EXITED_LINE = /^(\S+) pid (\d+) exited \((.+)\)$/;

export interface ServiceProcessInfo {
  pid: number;
  probePort: number;
}

/** A reply seen by the suite's client, or the transport error when there was no HTTP reply at all. */
export type Seen = Reply | { status: 0; error: string };

/**
 * The plane as deployed (`npm run start:services`: seven processes) on a NATS and a Redis of this suite alone and the
 * shared PostgreSQL behind a TCP proxy the suite can cut, pause and resume, in a schema prefix of its own. The
 * launcher restarts a killed service, as Kubernetes restarts a pod.
 */
export class FaultPlane {
  readonly seen: Seen[] = [];
  readonly killed = new Set<string>();
  private readonly killedPids = new Map<string, number>();
  /** Every session the suite opened: the ledger check walks them all. */
  readonly sessions = new Set<string>();
  /** Losses already in an earlier fault's row. */
  readonly reportedLosses = new Set<string>();

  private constructor(
    readonly nats: PrivateServer,
    readonly redis: PrivateServer,
    readonly postgres: TcpProxy,
    readonly recordFile: string,
    readonly home: string,
    private readonly schemaPrefix: string,
    private readonly launcher: ReturnType<typeof spawnTs>,
    readonly flow: ReadmeFlow,
    private readonly transport: NatsTransport,
    readonly bus: BusClient,
  ) {}

  private get launcherOutput(): string {
    return this.launcher.output().stdout;
  }

  static async start(): Promise<FaultPlane> {
    const [nats, redis, postgres] = await Promise.all([
      PrivateServer.nats(),
      PrivateServer.redis(),
      startTcpProxy('127.0.0.1', Number(new URL(TEST_DATABASE_URL).port || 5432)),
    ]);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-faults-'));
    const recordFile = path.join(home, 'executions.log');
    fs.writeFileSync(recordFile, '');
    const schemaPrefix = uniquePrefix();
    const database = new URL(TEST_DATABASE_URL);
    database.host = `127.0.0.1:${postgres.port}`;
    const port = await freePort();
    const launcher = spawnTs(LAUNCHER, {
      NATS_URL: nats.url,
      REDIS_URL: redis.url,
      DATABASE_URL: database.toString(),
      DATABASE_SCHEMA_PREFIX: schemaPrefix,
      APPHOST_PORT: String(port),
      APPHOST_HOME: home,
      LOG_LEVEL: 'warn',
      REGISTRY_ALLOW_STDIO: 'true',
      CATALOG_APP_TOOLSETS: JSON.stringify({ demo: [{ toolsetId: 'vanilla' }, { toolsetId: 'recorder' }] }),
      // Records left PENDING by a fault become collectable quickly, so the GC check below has teeth.
      GOVERNED_SEAL_PENDING_TTL_MS: '1000',
      SEALED_GC_INTERVAL_MS: '0',
      SHUTDOWN_GRACE_MS: '2000',
    });
    const output = () => `${launcher.output().stdout}\n${launcher.output().stderr}`;
    await eventually(async () => (launcher.exitCode !== null ? false : /AppHost services are running/.test(launcher.output().stdout)), 120_000, 200).catch(
      (error: Error) => {
        launcher.kill('SIGKILL');
        throw new Error(`${error.message}\n${output()}`);
      },
    );
    const transport = await connectTestTransport('fault-suite', { natsUrl: nats.url });
    const bus = new BusClient({ transport, defaultTimeoutMs: 10_000 });
    const flow = new ReadmeFlow(`http://127.0.0.1:${port}`, path.join(home, 'dev-token'));
    const plane = new FaultPlane(nats, redis, postgres, recordFile, home, schemaPrefix, launcher, flow, transport, bus);
    await flow.setUp({ vanilla: vanillaToolset(), recorder: recorderToolset(recordFile) });
    return plane;
  }

  /** The current process of each service, from the launcher's lines (the last start of each name wins). */
  services(): Map<string, ServiceProcessInfo> {
    const current = new Map<string, ServiceProcessInfo>();
    for (const line of this.launcherOutput.split('\n')) {
      const m = STARTED_LINE.exec(line);
      if (m) current.set(m[1], { pid: Number(m[2]), probePort: Number(m[4]) });
    }
    return current;
  }

  /** Services that exited without the suite killing them: a fault must never take down a bystander. */
  unaskedExits(): string[] {
    return this.launcherOutput.split('\n').flatMap((line) => {
      const m = EXITED_LINE.exec(line);
      return m && !this.killed.has(m[1]) ? [line] : [];
    });
  }

  launcherAlive(): boolean {
    return this.launcher.exitCode === null && this.launcher.signalCode === null;
  }

  /** SIGKILL of one service's current process (see `restarted`). */
  async kill(name: string): Promise<void> {
    const before = this.services().get(name);
    if (!before) throw new Error(`no service ${name}`);
    this.killed.add(name);
    this.killedPids.set(name, before.pid);
    process.kill(before.pid, 'SIGKILL');
  }

  /** Resolves once the launcher has started `name` again after `kill` and its probe answers /healthz. */
  async restarted(name: string, boundMs = 60_000): Promise<void> {
    const killedPid = this.killedPids.get(name);
    await eventually(
      async () => {
        const now = this.services().get(name);
        if (!now || now.pid === killedPid) return undefined;
        const res = await fetch(`http://127.0.0.1:${now.probePort}/healthz`).catch(() => undefined);
        return res?.ok ? true : undefined;
      },
      boundMs,
      200,
    );
  }

  /** One call through the suite's client, recorded whatever came back. */
  async call(send: (flow: ReadmeFlow) => Promise<Reply>): Promise<Seen> {
    const seen: Seen = await send(this.flow).catch((error: Error) => ({ status: 0 as const, error: error.message }));
    this.seen.push(seen);
    return seen;
  }

  executions(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const key of fs.readFileSync(this.recordFile, 'utf8').split('\n').filter(Boolean)) counts.set(key, (counts.get(key) ?? 0) + 1);
    return counts;
  }

  logs(): string {
    return `${this.launcher.output().stdout}\n${this.launcher.output().stderr}`;
  }

  async stop(): Promise<void> {
    await this.transport.close().catch(() => undefined);
    if (this.launcherAlive()) {
      const exited = new Promise<void>((resolve) => this.launcher.once('exit', () => resolve()));
      this.launcher.kill('SIGTERM');
      const timer = setTimeout(() => this.launcher.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    await Promise.all([this.nats.stop(), this.redis.stop(), this.postgres.close()]);
    await dropSchemasWithPrefix(this.schemaPrefix).catch(() => undefined);
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}

/** The recording fixture as a toolset of the demo profile (stdio, like the README's server). */
function recorderToolset(recordFile: string): Record<string, unknown> {
  return {
    connection: {
      kind: 'stdio',
      command: process.execPath,
      args: ['-r', path.join(REPO_ROOT, 'tools', 'register.cjs'), path.join(REPO_ROOT, 'tools', 'faults', 'recording-server.ts'), `--record=${recordFile}`],
      cwd: REPO_ROOT,
    },
    profileId: 'demo',
    requireConfirmation: false,
  };
}
