import { randomBytes } from 'node:crypto';
import { BusClient } from '@apphost/bus';
import type { HostProfile, ServiceName, ToolsetSpecInput } from '@apphost/contracts';
import {
  bootService,
  dropSchemasWithPrefix,
  fixtureServerCommand,
  publishedServerCommand,
  TEST_DATABASE_URL,
  type FakeProvider,
  type FixtureServerName,
  type PUBLISHED_SERVERS,
  type ServiceUnderTest,
  startFakeProviders,
  startPrivateNats,
  uniquePrefix,
} from '@apphost/testing';
import { Client as PgClient } from 'pg';
import { bindingRegistryService, createBindingRegistryService, type BindingRegistryOptions } from '../service';

export interface RegistryUnderTest extends ServiceUnderTest {
  instanceId: string;
}

/**
 * One registry instance on its own NATS connection (two of these are two registry replicas); `stop()` is idempotent.
 * `options.clock` (a `ManualClock`) lets the test move idle eviction, lifetimes and flow deadlines itself.
 */
export async function bootRegistry(
  natsUrl: string,
  prefix: string,
  env: Record<string, string> = {},
  options: BindingRegistryOptions = {},
): Promise<RegistryUnderTest> {
  const instanceId = env['INSTANCE_ID'] ?? `reg-${randomBytes(3).toString('hex')}`;
  const definition = options.clock ? createBindingRegistryService(options) : bindingRegistryService;
  const service = await bootService(definition, prefix, {
    NATS_URL: natsUrl,
    INSTANCE_ID: instanceId,
    REGISTRY_ALLOW_STDIO: 'true',
    REGISTRY_INSTANCE_LEASE_MS: '3000',
    REGISTRY_PROVIDER_TIMEOUT_MS: '500',
    ...env,
  });
  let stopped = false;
  return {
    ...service,
    instanceId,
    client: new BusClient({ transport: service.transport, defaultTimeoutMs: 30_000 }),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await service.stop();
    },
  };
}

/**
 * The usual registry suite: a private NATS server, the fake providers of `profile()` and one registry under a fresh
 * schema prefix, booted in `beforeAll` (then `setup`, e.g. the profiles and toolsets every test needs) and stopped in
 * `afterAll`, schemas dropped. Read `suite.registry` inside tests and hooks, not at module load.
 */
export function registrySuite(options: { env?: Record<string, string>; setup?: (registry: RegistryUnderTest) => Promise<unknown> } = {}): {
  readonly prefix: string;
  readonly registry: RegistryUnderTest;
  withoutProviders<T>(work: () => Promise<T>): Promise<T>;
} {
  const prefix = uniquePrefix();
  let nats: { url: string; stop(): Promise<void> } | undefined;
  let providers: { stop(): Promise<void> } | undefined;
  let registry: RegistryUnderTest | undefined;
  beforeAll(async () => {
    nats = await startPrivateNats();
    providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
    registry = await bootRegistry(nats.url, prefix, options.env);
    await options.setup?.(registry);
  }, 60_000);
  afterAll(async () => {
    await registry?.stop();
    await providers?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });
  return {
    prefix,
    get registry() {
      if (!registry) throw new Error('registrySuite: the registry is booted in beforeAll; read it inside a test or hook');
      return registry;
    },
    /** Runs `work` with the fake providers stopped (the host's stores gone), then starts them again. */
    async withoutProviders<T>(work: () => Promise<T>): Promise<T> {
      if (!nats) throw new Error('registrySuite: not booted');
      await providers?.stop();
      try {
        return await work();
      } finally {
        providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
      }
    },
  };
}

/** The store identity each provider of `profile()` reports in `describe`. */
interface ProviderIdentity {
  service: ServiceName;
  namespace: string;
  revision?: string;
}

export const PROVIDERS: Record<string, ProviderIdentity> = {
  principalResolver: { service: 'gateway', namespace: 'ns-gateway' },
  sessionAuthorizer: { service: 'governed-operations', namespace: 'ns-governed' },
  sealedResultStore: { service: 'sealed-result-store', namespace: 'ns-sealed', revision: '1' },
  lifecycleStore: { service: 'lifecycle-store', namespace: 'ns-lifecycle' },
  exportAuditStore: { service: 'export-audit', namespace: 'ns-export' },
};

/** `PROVIDERS` as fakes for `startFakeProviders`: each answers `describe` with its store identity. */
export const PROVIDER_FAKES: FakeProvider[] = Object.values(PROVIDERS).map((p) => ({
  service: p.service,
  stores: [{ kind: 'postgres', name: p.service, ready: true, namespace: p.namespace, ...(p.revision ? { revision: p.revision } : {}) }],
}));

/** A complete profile whose providers are the fakes above; the key provider is the registry itself. */
export function profile(overrides: Partial<HostProfile['providers']> = {}, connection: Partial<HostProfile['connectionPolicy']> = {}): HostProfile {
  const ref = (p: ProviderIdentity) => ({ service: p.service, namespace: p.namespace, ...(p.revision ? { revision: p.revision } : {}) });
  return {
    extension: { mimeTypes: ['text/html;profile=mcp-app'] },
    hostCapabilities: {
      openLinks: false,
      serverTools: true,
      serverResources: true,
      logging: false,
      message: { text: true },
      updateModelContext: { text: true, structuredContent: true },
    },
    renderer: { id: 'apphost-reference-host', version: '1' },
    providers: {
      principalResolver: ref(PROVIDERS['principalResolver']),
      sessionAuthorizer: ref(PROVIDERS['sessionAuthorizer']),
      keyProvider: { service: 'binding-registry' },
      sealedResultStore: ref(PROVIDERS['sealedResultStore']),
      lifecycleStore: ref(PROVIDERS['lifecycleStore']),
      exportAuditStore: ref(PROVIDERS['exportAuditStore']),
      ...overrides,
    },
    replayClassification: { source: 'profile', revision: '1' },
    callbackPolicy: { sampling: 'deny', elicitation: 'model-only', roots: 'deny' },
    connectionPolicy: { affinity: 'per-session', idleEvictMs: 60_000, maxLifetimeMs: 600_000, ...connection },
    resourcePolicy: { revision: '1', entries: [{ match: 'prefix', uri: 'ui://' }] },
    limits: {
      revision: '1',
      discovery: { maxPages: 8, maxItems: 1000, maxBytes: 512 * 1024, maxTimeMs: 4000 },
      mrtr: { maxRounds: 2, maxTotalMs: 30_000 },
      callTimeoutMs: 20_000,
      readTimeoutMs: 20_000,
    },
  };
}

export function fixtureSpec(
  name: FixtureServerName,
  profileId: string | null,
  args: string[] = [],
  protocol: 'legacy' | '2026-07-28' = 'legacy',
): ToolsetSpecInput {
  const cmd = fixtureServerCommand(name, args);
  return { connection: { kind: 'stdio', command: cmd.command, args: cmd.args, cwd: cmd.cwd }, protocol, profileId };
}

export function publishedSpec(server: keyof typeof PUBLISHED_SERVERS, profileId: string | null): ToolsetSpecInput {
  const cmd = publishedServerCommand(server);
  return { connection: { kind: 'stdio', command: cmd.command, args: cmd.args, cwd: cmd.cwd }, profileId };
}

export const alice = { tenant: 'acme', subject: 'alice', scopes: ['runtime'] };
export const bob = { tenant: 'acme', subject: 'bob', scopes: ['runtime'] };
export const session = (id: string, incarnation = 1) => ({ key: { tenant: 'acme', appName: 'app', userId: 'u', sessionId: id }, incarnation });

export function httpSpec(
  url: string,
  profileId: string | null,
  headers: Record<string, { secretRef: string }> = {},
  protocol: 'legacy' | '2026-07-28' = 'legacy',
): ToolsetSpecInput {
  return { connection: { kind: 'http', url, headers }, protocol, profileId };
}

/** Reads the registry's own schema directly (rows the suite asserts on: directory states, stored specs). */
export async function queryRegistrySchema<R extends Record<string, unknown>>(prefix: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new PgClient({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${prefix}binding_registry"`);
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}
