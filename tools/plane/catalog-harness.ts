import path from 'node:path';
import { SignJWT } from 'jose';
import { BusServer, NatsTransport } from '@apphost/bus';
import { describeContract, type DescribeResponse, type HostProfile, type ServiceName, type ToolsetSpecInput } from '@apphost/contracts';
import { bootService, fixtureServerCommand, publishedServerCommand, REPO_ROOT, type FixtureServerName, type PUBLISHED_SERVERS, type ServiceUnderTest } from '@apphost/testing';
import { loadServiceDefinitions } from './services';

export const JWT = { issuer: 'https://issuer.catalog-e2e', audience: 'apphost-catalog-e2e', secret: 'a-catalog-e2e-secret-that-is-at-least-32-bytes' };

export const token = (sub: string, scope = 'runtime admin', tenant = 'acme') =>
  new SignJWT({ tenant, scope }).setProtectedHeader({ alg: 'HS256' }).setIssuer(JWT.issuer).setAudience(JWT.audience).setSubject(sub).setIssuedAt().setExpirationTime('10m').sign(new TextEncoder().encode(JWT.secret));

/** Services that only answer `describe`: the providers a profile references that this suite does not run for real. */
export async function fakeProviders(natsUrl: string, services: ServiceName[]): Promise<{ stop(): Promise<void> }> {
  const transport = await NatsTransport.connect({ servers: natsUrl, name: 'fake-providers' });
  const servers = services.map((service) => {
    const server = new BusServer({ transport, instanceId: `fake-${service}`, queueGroup: service, logger: { error: () => undefined, warn: () => undefined } });
    server.register(describeContract(service), (): DescribeResponse => ({ service, version: 'test', instanceId: `fake-${service}`, transport: 'nats', startedAt: new Date().toISOString(), stores: [] }));
    server.start();
    return server;
  });
  return {
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop(100)));
      await transport.close();
    },
  };
}

/** A complete profile (no pinned namespaces): PROFILE_BOUND once the six providers answer `describe`. */
export function profile(discovery: Partial<HostProfile['limits']['discovery']> = {}): HostProfile {
  const ref = (service: ServiceName) => ({ service });
  return {
    extension: { mimeTypes: ['text/html;profile=mcp-app'] },
    hostCapabilities: { openLinks: true, serverTools: true, serverResources: true, logging: false },
    renderer: { id: 'apphost-reference-host', version: '1' },
    providers: {
      principalResolver: ref('gateway'),
      sessionAuthorizer: ref('governed-operations'),
      keyProvider: ref('binding-registry'),
      sealedResultStore: ref('sealed-result-store'),
      lifecycleStore: ref('lifecycle-store'),
      exportAuditStore: ref('export-audit'),
    },
    replayClassification: { source: 'profile', revision: '1' },
    callbackPolicy: { sampling: 'deny', elicitation: 'model-only', roots: 'deny' },
    connectionPolicy: { affinity: 'per-session', idleEvictMs: 60_000, maxLifetimeMs: 600_000 },
    resourcePolicy: { revision: '1', entries: [{ match: 'prefix', uri: 'ui://' }] },
    limits: {
      revision: '1',
      discovery: { maxPages: 8, maxItems: 2000, maxBytes: 1024 * 1024, maxTimeMs: 4000, ...discovery },
      mrtr: { maxRounds: 2, maxTotalMs: 30_000 },
      callTimeoutMs: 20_000,
      readTimeoutMs: 20_000,
    },
  };
}

const stdio = (cmd: { command: string; args: string[]; cwd: string }, profileId: string | null): ToolsetSpecInput => ({ connection: { kind: 'stdio', command: cmd.command, args: cmd.args, cwd: cmd.cwd }, profileId });
export const fixtureSpec = (name: FixtureServerName, profileId: string | null, args: string[] = []) => stdio(fixtureServerCommand(name, args), profileId);
export const publishedSpec = (server: keyof typeof PUBLISHED_SERVERS, profileId: string | null) => stdio(publishedServerCommand(server), profileId);
/** The catalog-matrix fixture (visibility cases, reserved names, `--count`, `--state-file` drift). */
export const matrixSpec = (profileId: string | null, args: string[] = []) =>
  stdio({ command: process.execPath, args: ['-r', path.join(REPO_ROOT, 'tools', 'register.cjs'), path.join(REPO_ROOT, 'libs', 'testing', 'src', 'fixtures', 'catalog-matrix.ts'), ...args], cwd: REPO_ROOT }, profileId);

export interface CatalogPlane {
  registry: ServiceUnderTest;
  catalog: ServiceUnderTest;
  lifecycle: ServiceUnderTest;
  gateway: ServiceUnderTest;
  base: string;
  stop(): Promise<void>;
}

/** gateway + lifecycle-store + binding-registry + catalog-policy, booted from their definitions (by path) on one NATS. */
export async function bootCatalogPlane(natsUrl: string, prefix: string, catalogEnv: Record<string, string> = {}): Promise<CatalogPlane> {
  const definitions = loadServiceDefinitions();
  const byName = (name: string) => definitions.find((d) => d.name === name)!;
  const env = { NATS_URL: natsUrl };
  const started: ServiceUnderTest[] = [];
  const boot = async (name: string, extra: Record<string, string> = {}) => {
    const s = await bootService(byName(name), prefix, { ...env, ...extra });
    started.push(s);
    return s;
  };
  try {
    const lifecycle = await boot('lifecycle-store');
    const registry = await boot('binding-registry', { REGISTRY_ALLOW_STDIO: 'true', REGISTRY_PROVIDER_TIMEOUT_MS: '1000', INSTANCE_ID: 'reg-catalog' });
    const catalog = await boot('catalog-policy', catalogEnv);
    const gateway = await boot('gateway', { AUTH_MODE: 'jwt', AUTH_JWT_ISSUER: JWT.issuer, AUTH_JWT_AUDIENCE: JWT.audience, AUTH_JWT_HS256_SECRET: JWT.secret });
    return {
      registry,
      catalog,
      lifecycle,
      gateway,
      base: gateway.running.url!.replace('[::1]', '127.0.0.1'),
      stop: async () => {
        for (const s of started.reverse()) await s.stop();
      },
    };
  } catch (error) {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
    throw error;
  }
}
