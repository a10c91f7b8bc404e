import type { HostProfile, ToolsetSpecInput } from '@apphost/contracts';
import { describeContract } from '@apphost/contracts';
import {
  bootServices,
  dropSchemasWithPrefix,
  eventually,
  freePort,
  spawnTs,
  startFakeProviders,
  startPrivateNats,
  TEST_REDIS_URL,
  uniquePrefix,
  waitForExit,
  type BootedServices,
  type PrivateNats,
} from '@apphost/testing';
import { baseUrlOf, JWT_GATEWAY_ENV, token } from './catalog-harness';
import { FAULT_REACHED } from './governed-faulted';
import { loadServiceDefinitions } from './services';
import { putProfile, putToolset, VIEW_ORIGIN, viewHttp } from './views-harness';

/*
 * The crash suites' plane: the View plane of `views-harness.ts`, except that governed-operations is its own process
 * (`tools/plane/governed-faulted.ts`) that a suite restarts with one fault point armed and SIGKILLs when the code
 * path reaches it. Its state lives in Redis (View records, limiter) and PostgreSQL (lifecycle-store), so a
 * restarted process carries on where the killed one stopped.
 */

const GOVERNED_ENTRY = 'tools/plane/governed-faulted.ts';

/** governed-operations in its own process; `restart(point)` arms `point` in the new one. */
export class GovernedProcess {
  private child: ReturnType<typeof spawnTs> | null = null;

  constructor(
    private readonly env: Record<string, string>,
    private readonly answers: () => Promise<boolean>,
  ) {}

  /** Starts it (armed with `faultPoint` when given) and waits until it answers `describe` on the bus. */
  async restart(faultPoint?: string): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) await this.kill();
    const child = spawnTs(GOVERNED_ENTRY, { ...this.env, ...(faultPoint ? { GOVERNED_FAULT_POINT: faultPoint } : {}) });
    this.child = child;
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`governed-operations exited (${child.exitCode}): ${child.output().stderr}`);
        return child.output().stdout.includes('READY ') && (await this.answers()) ? true : undefined;
      },
      60_000,
      200,
    );
  }

  /** Resolves once the armed fault point holds the code path (the process is frozen there). */
  async reached(point: string, timeoutMs = 15_000): Promise<void> {
    const child = this.child;
    if (!child) throw new Error('governed-operations is not running');
    await eventually(async () => (child.output().stdout.includes(`${FAULT_REACHED}${point}`) ? true : undefined), timeoutMs, 20);
  }

  /** SIGKILL: no graceful stop, nothing after the fault point runs. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await waitForExit(child, 10_000);
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await waitForExit(child, 20_000).catch(() => undefined);
  }
}

export interface CrashPlane {
  prefix: string;
  nats: PrivateNats;
  governed: GovernedProcess;
  services: BootedServices<'lifecycle' | 'sealed' | 'registry' | 'catalog' | 'gateway'>['services'];
  http: ReturnType<typeof viewHttp>;
  bearer(sub: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * The rest of the View plane in process, then governed-operations (probed with `describe` through the registry's
 * bus client), then the profiles and toolsets: the registry binds a profile only once its `sessionAuthorizer`
 * (governed-operations) answers, and each toolset must end `PROFILE_BOUND`.
 */
export async function startCrashPlane(setup: {
  apps: Record<string, string[]>;
  profiles: Record<string, HostProfile>;
  toolsets: Record<string, ToolsetSpecInput>;
  governedEnv?: Record<string, string>;
}): Promise<CrashPlane> {
  const prefix = uniquePrefix();
  const nats = await startPrivateNats();
  const providers = await startFakeProviders(nats.url, ['export-audit']);
  let booted: BootedServices<'lifecycle' | 'sealed' | 'registry' | 'catalog' | 'gateway'> | undefined;
  let governed: GovernedProcess | undefined;
  const stop = async () => {
    await booted?.stop();
    await governed?.stop();
    await providers.stop();
    await nats.stop();
    await dropSchemasWithPrefix(prefix);
  };
  try {
    const definitions = loadServiceDefinitions();
    const byName = (name: string) => {
      const definition = definitions.find((d) => d.name === name);
      if (!definition) throw new Error(`no service definition named ${name}`);
      return definition;
    };
    const catalogToolsets = Object.fromEntries(Object.entries(setup.apps).map(([app, ids]) => [app, ids.map((toolsetId) => ({ toolsetId }))]));
    booted = await bootServices(
      prefix,
      {
        lifecycle: {
          definition: byName('lifecycle-store'),
          env: { LIFECYCLE_CASCADE_PARTICIPANTS: 'governed-operations,sealed-result-store,binding-registry' },
        },
        sealed: { definition: byName('sealed-result-store'), env: { SEALED_GC_INTERVAL_MS: '0' } },
        registry: {
          definition: byName('binding-registry'),
          env: { REGISTRY_ALLOW_STDIO: 'true', REGISTRY_PROVIDER_TIMEOUT_MS: '1000', INSTANCE_ID: `reg-${prefix.replace(/[^A-Za-z0-9]/g, '').slice(-12)}` },
        },
        catalog: { definition: byName('catalog-policy'), env: { CATALOG_APP_TOOLSETS: JSON.stringify(catalogToolsets) } },
        gateway: { definition: byName('gateway'), env: { ...JWT_GATEWAY_ENV, AUTH_ORIGIN_ALLOWLIST: VIEW_ORIGIN } },
      },
      { NATS_URL: nats.url },
    );
    const client = booted.services.registry.client;
    governed = new GovernedProcess(
      {
        NATS_URL: nats.url,
        REDIS_URL: TEST_REDIS_URL,
        DATABASE_SCHEMA_PREFIX: prefix,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(await freePort()),
        INSTANCE_ID: `gov-${prefix.replace(/[^A-Za-z0-9]/g, '').slice(-12)}`,
        LOG_LEVEL: 'warn',
        ...setup.governedEnv,
      },
      () =>
        client.request(describeContract('governed-operations'), {}, { timeoutMs: 500 }).then(
          () => true,
          () => false,
        ),
    );
    await governed.restart();
    const registry = { registry: booted.services.registry };
    for (const [profileId, body] of Object.entries(setup.profiles)) await putProfile(registry, profileId, body);
    const states = await Promise.all(Object.entries(setup.toolsets).map(async ([id, spec]) => [id, await putToolset(registry, id, spec)] as const));
    const notBound = states.filter(([, state]) => state !== 'PROFILE_BOUND');
    if (notBound.length > 0) throw new Error(`toolsets not PROFILE_BOUND: ${JSON.stringify(notBound)}`);
  } catch (error) {
    await stop();
    throw error;
  }
  const services = booted.services;
  return {
    prefix,
    nats,
    governed: governed as GovernedProcess,
    services,
    http: viewHttp({ base: baseUrlOf(services.gateway) }),
    bearer: (sub) => token(sub, 'runtime view'),
    stop,
  };
}
