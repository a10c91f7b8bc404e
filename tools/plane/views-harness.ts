import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { RegistryPutProfile, RegistryPutToolset, type HostProfile, type RunToolBatchResponse, type ToolsetSpecInput } from '@apphost/contracts';
import { BusClient, type NatsTransport } from '@apphost/bus';
import {
  bootServices,
  connectTestTransport,
  eventually,
  freePort,
  spawnTs,
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  waitForExit,
  type ServiceUnderTest,
} from '@apphost/testing';
/** One service of a `bootServices` plan. */
type ServiceBoot = Parameters<typeof bootServices>[1][string];
import { baseUrlOf, JWT_GATEWAY_ENV, profile } from './catalog-harness';
import { loadServiceDefinitions } from './services';

/** The host page's origin in the View suites (on the gateway's browser-route allowlist). */
export const VIEW_ORIGIN = 'https://host.views-e2e.example';

export type ViewPlaneServices = Record<'lifecycle' | 'sealed' | 'catalog' | 'governed' | 'gateway', ServiceUnderTest> & {
  /** In process, or (option `registryProcess`) a client of the registry's own process. */
  registry: Pick<ServiceUnderTest, 'client' | 'stop'>;
};

export interface ViewPlane extends ViewPlaneServices {
  base: string;
  /** The registry's own process when booted with `registryProcess` (it can be killed and restarted), else null. */
  registryProcess: RegistryProcess | null;
  stop(): Promise<void>;
}

/**
 * The plane a View needs: lifecycle-store (governed-operations, sealed-result-store and binding-registry are its
 * cascade participants, so a deleted session revokes its Views and ends its connections), sealed-result-store,
 * binding-registry, catalog-policy, governed-operations and the gateway (JWT auth, `VIEW_ORIGIN` allowlisted), booted
 * from their definitions on one NATS. export-audit is the caller's to provide (a fake provider answers describe).
 */
export async function bootViewPlane(
  natsUrl: string,
  prefix: string,
  appToolsets: Record<string, string[]>,
  env: Partial<Record<keyof ViewPlaneServices, Record<string, string>>> = {},
  options: { registryProcess?: boolean } = {},
): Promise<ViewPlane> {
  const definitions = loadServiceDefinitions();
  const byName = (name: string) => {
    const definition = definitions.find((d) => d.name === name);
    if (!definition) throw new Error(`no service definition named ${name}`);
    return definition;
  };
  const catalogToolsets = Object.fromEntries(Object.entries(appToolsets).map(([app, ids]) => [app, ids.map((toolsetId) => ({ toolsetId }))]));
  const registryEnv = {
    REGISTRY_ALLOW_STDIO: 'true',
    REGISTRY_PROVIDER_TIMEOUT_MS: '1000',
    INSTANCE_ID: `reg-${prefix.replace(/[^A-Za-z0-9]/g, '').slice(-12)}`,
    ...env.registry,
  };
  const registryProcess = options.registryProcess ? await RegistryProcess.start(natsUrl, prefix, registryEnv) : null;
  const registryPlan: Record<string, ServiceBoot> = registryProcess ? {} : { registry: { definition: byName('binding-registry'), env: registryEnv } };
  const booted = await bootServices<string>(
    prefix,
    {
      lifecycle: {
        definition: byName('lifecycle-store'),
        env: { LIFECYCLE_CASCADE_PARTICIPANTS: 'governed-operations,sealed-result-store,binding-registry', ...env.lifecycle },
      },
      sealed: { definition: byName('sealed-result-store'), env: { SEALED_GC_INTERVAL_MS: '0', ...env.sealed } },
      ...registryPlan,
      catalog: { definition: byName('catalog-policy'), env: { CATALOG_APP_TOOLSETS: JSON.stringify(catalogToolsets), ...env.catalog } },
      governed: { definition: byName('governed-operations'), env: { ...env.governed } },
      gateway: { definition: byName('gateway'), env: { ...JWT_GATEWAY_ENV, AUTH_ORIGIN_ALLOWLIST: VIEW_ORIGIN, ...env.gateway } },
    },
    { NATS_URL: natsUrl },
  ).catch(async (error: unknown) => {
    await registryProcess?.stop();
    throw error;
  });
  const typed = { ...booted.services, ...(registryProcess ? { registry: registryProcess } : {}) } as unknown as ViewPlaneServices;
  const stop = async () => {
    await booted.stop();
    await registryProcess?.stop();
  };
  return { ...typed, base: baseUrlOf(typed.gateway), registryProcess, stop };
}

/**
 * binding-registry as its own process (`apps/binding-registry/src/main.ts`, as deployed) on the plane's NATS,
 * PostgreSQL schemas and Redis prefix, so a suite can crash its owner: `kill` is a SIGKILL (no graceful stop, its
 * rows stay LIVE, its stdio children lose their parent), `restart` starts it again with the same INSTANCE_ID.
 */
export class RegistryProcess {
  private child: ReturnType<typeof spawnTs>;

  private constructor(
    private readonly env: Record<string, string>,
    private readonly transport: NatsTransport,
    readonly client: BusClient,
  ) {
    this.child = spawnTs(REGISTRY_ENTRY, env);
  }

  static async start(natsUrl: string, prefix: string, env: Record<string, string>): Promise<RegistryProcess> {
    const processEnv = {
      NATS_URL: natsUrl,
      DATABASE_URL: TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      DATABASE_SCHEMA_PREFIX: prefix,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(await freePort()),
      SHUTDOWN_GRACE_MS: '2000',
      LOG_LEVEL: 'warn',
      ...env,
    };
    const transport = await connectTestTransport('test-registry-process', { natsUrl });
    const registry = new RegistryProcess(processEnv, transport, new BusClient({ transport, defaultTimeoutMs: 5000 }));
    await registry.healthy().catch(async (error: unknown) => {
      await registry.stop();
      throw error;
    });
    return registry;
  }

  get instanceId(): string {
    return this.env.INSTANCE_ID;
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await waitForExit(this.child, 10_000);
  }

  async restart(): Promise<void> {
    this.child = spawnTs(REGISTRY_ENTRY, this.env);
    await this.healthy();
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      await waitForExit(this.child, 20_000).catch(() => undefined);
    }
    await this.transport.close().catch(() => undefined);
  }

  /** Its probe answers /healthz (its bus handlers are subscribed by then). */
  private async healthy(): Promise<void> {
    const child = this.child;
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`binding-registry exited (${child.exitCode}): ${child.output().stderr}`);
        const res = await fetch(`http://127.0.0.1:${this.env.HTTP_PORT}/healthz`).catch(() => undefined);
        return res?.ok ? true : undefined;
      },
      60_000,
      200,
    );
  }
}

const REGISTRY_ENTRY = 'apps/binding-registry/src/main.ts';

/** A profile for Views: the test profile, with View fields the caller sets (lease, replay classification, …). */
export function viewProfile(overrides: Partial<HostProfile> = {}): HostProfile {
  return { ...profile(), ...overrides };
}

export async function putProfile(plane: Pick<ViewPlane, 'registry'>, profileId: string, body: HostProfile): Promise<void> {
  await plane.registry.client.request(RegistryPutProfile, { profileId, profile: body });
}

export async function putToolset(plane: Pick<ViewPlane, 'registry'>, toolsetId: string, spec: ToolsetSpecInput): Promise<string> {
  return (await plane.registry.client.request(RegistryPutToolset, { toolsetId, spec }, { timeoutMs: 60_000 })).status.state;
}

export interface HttpReply {
  status: number;
  text: string;
  headers: Headers;
  body: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test replies are read field by field
}

/** HTTP against the plane's gateway as a browser would call the View routes: bearer, the host page's Origin, JSON. */
export function viewHttp(plane: Pick<ViewPlane, 'base'>) {
  return async (
    method: string,
    url: string,
    options: { body?: unknown; bearer: string; origin?: string | null; headers?: Record<string, string> },
  ): Promise<HttpReply> => {
    const origin = options.origin === undefined ? VIEW_ORIGIN : options.origin;
    const res = await fetch(`${plane.base}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${options.bearer}`,
        ...(origin ? { origin } : {}),
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await res.text();
    return { status: res.status, text, headers: res.headers, body: text ? (JSON.parse(text) as HttpReply['body']) : {} };
  };
}

/** Creates a session and runs one UI call in it; the appended event. */
export async function sessionWithUiCall(
  http: ReturnType<typeof viewHttp>,
  bearer: string,
  target: { appName: string; sessionId: string; tool: string; arguments?: Record<string, unknown>; functionCallId?: string; userId?: string },
): Promise<RunToolBatchResponse> {
  const user = target.userId ? { userId: target.userId } : {};
  const created = await http('POST', '/v1/sessions', { bearer, body: { appName: target.appName, sessionId: target.sessionId, ...user } });
  if (created.status !== 201) throw new Error(`session create: ${created.status} ${created.text}`);
  return uiCall(http, bearer, target);
}

/** One UI call in an existing session; the appended event. */
export async function uiCall(
  http: ReturnType<typeof viewHttp>,
  bearer: string,
  target: {
    appName: string;
    sessionId: string;
    tool: string;
    arguments?: Record<string, unknown>;
    functionCallId?: string;
    userId?: string;
    invocationId?: string;
  },
): Promise<RunToolBatchResponse> {
  const res = await http('POST', `/v1/sessions/${target.sessionId}/tool-batches`, {
    bearer,
    body: {
      appName: target.appName,
      ...(target.userId ? { userId: target.userId } : {}),
      invocationId: target.invocationId ?? `inv-${target.functionCallId ?? 'call-1'}`,
      calls: [{ functionCallId: target.functionCallId ?? 'call-1', tool: target.tool, arguments: target.arguments ?? {} }],
    },
  });
  if (res.status !== 200) throw new Error(`tool batch: ${res.status} ${res.text}`);
  return res.body as RunToolBatchResponse;
}

/** What a plain MCP client (the v2 SDK over stdio, its own server process) reads of a resource and lists of tools. */
export async function directRead(
  command: { command: string; args: string[]; cwd: string },
  uri: string,
): Promise<{ contents: Array<Record<string, unknown>>; tools: Array<Record<string, unknown>> }> {
  const client = new Client({ name: 'views-e2e-direct', version: '1' }, {});
  await client.connect(new StdioClientTransport({ ...command, env: getDefaultEnvironment(), stderr: 'ignore' }));
  try {
    const read = await client.readResource({ uri });
    const listed = await client.listTools();
    return { contents: read.contents as Array<Record<string, unknown>>, tools: listed.tools as unknown as Array<Record<string, unknown>> };
  } finally {
    await client.close();
  }
}
