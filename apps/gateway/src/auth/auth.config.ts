import { z } from 'zod';
import { blankToUndefined, parseConfig } from '@apphost/runtime';
import { hostPageSettingsSchema, type HostPageSettings } from '../host/host.config';
import { normalizeOrigin } from './origin';

/** Algorithms a configured verifier may accept; `none` is absent by construction. */
export const SYMMETRIC_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

export const MIN_HS256_SECRET_BYTES = 32;
export const MIN_VIEW_TOKEN_SECRET_BYTES = 32;
export const DEFAULT_DEV_TOKEN_FILE = '.apphost/dev-token';

export type JwtKeySource = { kind: 'hs256-secret'; secret: string } | { kind: 'jwks-file'; path: string };

export interface JwtAuthConfig {
  mode: 'jwt';
  issuer: string;
  audience: string;
  key: JwtKeySource;
  algorithms: string[];
  clockToleranceSeconds: number;
  tenantClaim: string;
  originAllowlist: string[];
}

export interface DevelopmentAuthConfig {
  mode: 'development';
  devTokenFile: string;
  originAllowlist: string[];
}

export type AuthConfig = JwtAuthConfig | DevelopmentAuthConfig;

/** What the gateway's config schema yields: how callers authenticate, and the view-token secret (absent: per process). */
export interface GatewayAuthSettings {
  auth: AuthConfig;
  viewTokenSecret: Buffer | undefined;
  /** The reference web host and its sandbox origin. */
  hostPage: HostPageSettings;
}

// Docker/compose often passes unset variables as empty strings: treat those as absent.
const optionalString = z.preprocess(blankToUndefined, z.string().trim().optional());

const originListSchema = optionalString.transform((raw, ctx) => {
  const origins: string[] = [];
  for (const entry of (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const origin = normalizeOrigin(entry);
    if (origin) origins.push(origin);
    else ctx.addIssue({ code: 'custom', message: `not an http(s) origin: ${JSON.stringify(entry)}` });
  }
  return [...new Set(origins)];
});

const modeSchema = z.object({
  AUTH_MODE: z.enum(['jwt', 'development'], { error: 'must be "jwt" or "development"' }),
});

const developmentSchema = z.object({
  AUTH_DEV_TOKEN_FILE: optionalString,
  AUTH_ORIGIN_ALLOWLIST: originListSchema,
});

const jwtSchema = z
  .object({
    AUTH_JWT_ISSUER: optionalString,
    AUTH_JWT_AUDIENCE: optionalString,
    // Never trimmed or echoed: it is a secret.
    AUTH_JWT_HS256_SECRET: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
    AUTH_JWKS_FILE: optionalString,
    AUTH_JWT_ALGORITHMS: optionalString,
    AUTH_CLOCK_TOLERANCE_SECONDS: z.preprocess(
      blankToUndefined,
      z.coerce.number({ error: 'must be a number of seconds' }).int('must be an integer').min(0).max(300).optional(),
    ),
    AUTH_TENANT_CLAIM: optionalString,
    AUTH_ORIGIN_ALLOWLIST: originListSchema,
  })
  .superRefine(
    (env, ctx) => {
      const need = (name: 'AUTH_JWT_ISSUER' | 'AUTH_JWT_AUDIENCE') => {
        if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'required when AUTH_MODE=jwt' });
      };
      need('AUTH_JWT_ISSUER');
      need('AUTH_JWT_AUDIENCE');
      const hasSecret = env.AUTH_JWT_HS256_SECRET !== undefined;
      const hasJwks = env.AUTH_JWKS_FILE !== undefined;
      if (hasSecret && hasJwks) {
        ctx.addIssue({ code: 'custom', path: ['AUTH_JWT_HS256_SECRET'], message: 'set exactly one of AUTH_JWT_HS256_SECRET or AUTH_JWKS_FILE, not both' });
      } else if (!hasSecret && !hasJwks) {
        ctx.addIssue({ code: 'custom', path: ['AUTH_JWT_HS256_SECRET'], message: 'set exactly one of AUTH_JWT_HS256_SECRET or AUTH_JWKS_FILE' });
      }
      if (hasSecret && Buffer.byteLength(env.AUTH_JWT_HS256_SECRET ?? '', 'utf8') < MIN_HS256_SECRET_BYTES) {
        ctx.addIssue({ code: 'custom', path: ['AUTH_JWT_HS256_SECRET'], message: `must be at least ${MIN_HS256_SECRET_BYTES} bytes` });
      }
      if (env.AUTH_JWT_ALGORITHMS !== undefined) {
        // Pinning the family to the key type prevents algorithm-confusion (an RS public key used as an HMAC secret).
        const allowed: readonly string[] = hasSecret ? SYMMETRIC_ALGORITHMS : ASYMMETRIC_ALGORITHMS;
        const algs = splitList(env.AUTH_JWT_ALGORITHMS);
        const bad = algs.filter((a) => !allowed.includes(a));
        if (algs.length === 0 || bad.length > 0) {
          const why = bad.some((a) => a.toLowerCase() === 'none') ? '"none" is never allowed' : `allowed for this key type: ${allowed.join(', ')}`;
          ctx.addIssue({ code: 'custom', path: ['AUTH_JWT_ALGORITHMS'], message: `invalid algorithm list (${why})` });
        }
      }
      if (env.AUTH_TENANT_CLAIM !== undefined && !/^[A-Za-z0-9_:/.-]{1,128}$/.test(env.AUTH_TENANT_CLAIM)) {
        ctx.addIssue({ code: 'custom', path: ['AUTH_TENANT_CLAIM'], message: 'must be a claim name' });
      }
    },
    { when: () => true },
  ); // also when a field failed: every problem is listed at once (the check reads raw strings only)

function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

class AuthConfigProblems extends Error {
  constructor(readonly issues: z.core.$ZodIssue[]) {
    super('invalid auth configuration');
  }
}

function fail(error: z.ZodError): never {
  throw new AuthConfigProblems(error.issues);
}

// Standard or URL-safe base64, padding optional; never trimmed or echoed: it is a secret.
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

const viewTokenSecretSchema = z.object({
  GATEWAY_VIEW_TOKEN_SECRET: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .optional()
      .transform((raw, ctx) => {
        if (raw === undefined) return undefined;
        const bytes = BASE64.test(raw) && raw.replace(/=+$/, '').length % 4 !== 1 ? Buffer.from(raw, 'base64') : undefined;
        if (!bytes) ctx.addIssue({ code: 'custom', message: 'must be base64' });
        else if (bytes.length < MIN_VIEW_TOKEN_SECRET_BYTES)
          ctx.addIssue({ code: 'custom', message: `must decode to at least ${MIN_VIEW_TOKEN_SECRET_BYTES} bytes` });
        return bytes;
      }),
  ),
});

/**
 * The gateway's settings as a service config schema: `{ auth, viewTokenSecret }`, every bad variable one listed
 * problem naming it (the mode decides which variables apply, so the variant is chosen before its schema runs).
 */
export const authConfig = z.looseObject({}).transform((env, ctx): GatewayAuthSettings => {
  const vars = env as Record<string, string | undefined>;
  const issues: z.core.$ZodIssue[] = [];
  let auth: AuthConfig | undefined;
  try {
    auth = readAuthConfig(vars);
  } catch (error) {
    if (!(error instanceof AuthConfigProblems)) throw error;
    issues.push(...error.issues);
  }
  const view = viewTokenSecretSchema.safeParse({ GATEWAY_VIEW_TOKEN_SECRET: vars['GATEWAY_VIEW_TOKEN_SECRET'] });
  if (!view.success) issues.push(...view.error.issues);
  const hostPage = hostPageSettingsSchema.safeParse(vars);
  if (!hostPage.success) issues.push(...hostPage.error.issues);
  if (issues.length > 0 || !auth || !view.success || !hostPage.success) {
    for (const issue of issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    return z.NEVER;
  }
  return { auth, viewTokenSecret: view.data.GATEWAY_VIEW_TOKEN_SECRET, hostPage: hostPage.data };
});

function readAuthConfig(env: Record<string, string | undefined>): AuthConfig {
  const mode = modeSchema.safeParse({ AUTH_MODE: env['AUTH_MODE'] });
  if (!mode.success) fail(mode.error);

  if (mode.data.AUTH_MODE === 'development') {
    const dev = developmentSchema.safeParse(env);
    if (!dev.success) fail(dev.error);
    return {
      mode: 'development',
      devTokenFile: dev.data.AUTH_DEV_TOKEN_FILE ?? DEFAULT_DEV_TOKEN_FILE,
      originAllowlist: dev.data.AUTH_ORIGIN_ALLOWLIST,
    };
  }

  const jwt = jwtSchema.safeParse(env);
  if (!jwt.success) fail(jwt.error);
  const e = jwt.data;
  const key: JwtKeySource =
    e.AUTH_JWT_HS256_SECRET !== undefined ? { kind: 'hs256-secret', secret: e.AUTH_JWT_HS256_SECRET } : { kind: 'jwks-file', path: e.AUTH_JWKS_FILE as string };
  return {
    mode: 'jwt',
    issuer: e.AUTH_JWT_ISSUER as string,
    audience: e.AUTH_JWT_AUDIENCE as string,
    key,
    algorithms: e.AUTH_JWT_ALGORITHMS ? splitList(e.AUTH_JWT_ALGORITHMS) : key.kind === 'hs256-secret' ? ['HS256'] : ['RS256', 'ES256'],
    clockToleranceSeconds: e.AUTH_CLOCK_TOLERANCE_SECONDS ?? 5,
    tenantClaim: e.AUTH_TENANT_CLAIM ?? 'tenant',
    originAllowlist: e.AUTH_ORIGIN_ALLOWLIST,
  };
}

/** Parses the gateway's auth settings (tests); the gateway gets them in `context.config`. */
export function parseAuthSettings(env: Record<string, string | undefined>): GatewayAuthSettings {
  return parseConfig('gateway', authConfig, env);
}

/** Parses the auth settings alone (tests); the gateway gets them in `context.config.auth`. */
export function parseAuthConfig(env: Record<string, string | undefined>): AuthConfig {
  return parseAuthSettings(env).auth;
}
