import path from 'node:path';
import { SignJWT } from 'jose';
import type { HostProfile, ServiceName, ToolsetSpecInput } from '@apphost/contracts';
import {
  bootServices,
  fixtureServerCommand,
  publishedServerCommand,
  REPO_ROOT,
  type FixtureServerName,
  type PUBLISHED_SERVERS,
  type ServiceUnderTest,
} from '@apphost/testing';
import { loadServiceDefinitions } from './services';

export const JWT = { issuer: 'https://issuer.catalog-e2e', audience: 'apphost-catalog-e2e', secret: 'a-catalog-e2e-secret-that-is-at-least-32-bytes' };

export const token = (sub: string, scope = 'runtime admin', tenant = 'acme') =>
  new SignJWT({ tenant, scope })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(JWT.issuer)
    .setAudience(JWT.audience)
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(JWT.secret));

/** A complete profile (no pinned namespaces): PROFILE_BOUND once the six providers answer `describe`. */
export function profile(discovery: Partial<HostProfile['limits']['discovery']> = {}): HostProfile {
  const ref = (service: ServiceName) => ({ service });
  return {
    extension: { mimeTypes: ['text/html;profile=mcp-app'] },
    hostCapabilities: { openLinks: false, serverTools: true, serverResources: true, logging: false },
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

const stdio = (cmd: { command: string; args: string[]; cwd: string }, profileId: string | null): ToolsetSpecInput => ({
  connection: { kind: 'stdio', command: cmd.command, args: cmd.args, cwd: cmd.cwd },
  profileId,
});
export const fixtureSpec = (name: FixtureServerName, profileId: string | null, args: string[] = []) => stdio(fixtureServerCommand(name, args), profileId);
export const publishedSpec = (server: keyof typeof PUBLISHED_SERVERS, profileId: string | null) => stdio(publishedServerCommand(server), profileId);
/** The catalog-matrix fixture (visibility cases, reserved names, `--count`, `--state-file` drift). */
export const matrixSpec = (profileId: string | null, args: string[] = []) =>
  stdio(
    {
      command: process.execPath,
      args: ['-r', path.join(REPO_ROOT, 'tools', 'register.cjs'), path.join(REPO_ROOT, 'libs', 'testing', 'src', 'fixtures', 'catalog-matrix.ts'), ...args],
      cwd: REPO_ROOT,
    },
    profileId,
  );

export interface CatalogPlane {
  registry: ServiceUnderTest;
  catalog: ServiceUnderTest;
  lifecycle: ServiceUnderTest;
  gateway: ServiceUnderTest;
  base: string;
  stop(): Promise<void>;
}

/** gateway + lifecycle-store + binding-registry + catalog-policy, booted from their service definitions on one NATS. */
export async function bootCatalogPlane(natsUrl: string, prefix: string, catalogEnv: Record<string, string> = {}): Promise<CatalogPlane> {
  const definitions = loadServiceDefinitions();
  const byName = (name: string) => definitions.find((d) => d.name === name)!;
  const { services, stop } = await bootServices(
    prefix,
    {
      lifecycle: { definition: byName('lifecycle-store') },
      registry: {
        definition: byName('binding-registry'),
        env: { REGISTRY_ALLOW_STDIO: 'true', REGISTRY_PROVIDER_TIMEOUT_MS: '1000', INSTANCE_ID: 'reg-catalog' },
      },
      catalog: { definition: byName('catalog-policy'), env: catalogEnv },
      gateway: { definition: byName('gateway'), env: JWT_GATEWAY_ENV },
    },
    { NATS_URL: natsUrl },
  );
  return { ...services, base: baseUrlOf(services.gateway), stop };
}

/** The gateway's environment for JWT auth with `JWT` (the tokens `token()` signs). */
export const JWT_GATEWAY_ENV = { AUTH_MODE: 'jwt', AUTH_JWT_ISSUER: JWT.issuer, AUTH_JWT_AUDIENCE: JWT.audience, AUTH_JWT_HS256_SECRET: JWT.secret };

/** The gateway's HTTP base URL, on the IPv4 loopback. */
export const baseUrlOf = (gateway: ServiceUnderTest): string => gateway.running.url!.replace('[::1]', '127.0.0.1');
