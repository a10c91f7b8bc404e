import { createSecretKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { AppHostError, principalSchema, type Principal } from '@apphost/contracts';
import { ASYMMETRIC_ALGORITHMS, MIN_HS256_SECRET_BYTES, SYMMETRIC_ALGORITHMS, type JwtAuthConfig } from './auth.config';

export interface TokenVerifierOptions {
  issuer: string;
  audience: string;
  /** An HMAC secret (utf-8 string or raw bytes) or a JWKS file of RS/ES public keys, read once here. */
  key: { secret: string | Uint8Array } | { jwksFile: string };
  /** Defaults: HS256 for a secret, RS256 + ES256 for a JWKS. */
  algorithms?: string[];
  clockToleranceSeconds?: number;
  tenantClaim?: string;
}

type VerifyKey = KeyObject | ReturnType<typeof createLocalJWKSet>;

// Headers cap this anyway; refusing early keeps a hostile token out of the JOSE parser.
const MAX_TOKEN_LENGTH = 16 * 1024;

const unauthenticated = (message: string) => new AppHostError('UNAUTHENTICATED', message);

/** Verifies bearer JWTs and turns their claims into a Principal; every failure is a safe UNAUTHENTICATED. */
export class TokenVerifier {
  private readonly key: VerifyKey;
  private readonly algorithms: string[];
  private readonly issuer: string;
  private readonly audience: string;
  private readonly clockTolerance: number;
  private readonly tenantClaim: string;

  constructor(options: TokenVerifierOptions) {
    this.issuer = options.issuer;
    this.audience = options.audience;
    this.clockTolerance = options.clockToleranceSeconds ?? 5;
    this.tenantClaim = options.tenantClaim ?? 'tenant';
    if ('secret' in options.key) {
      const bytes = typeof options.key.secret === 'string' ? Buffer.from(options.key.secret, 'utf8') : Buffer.from(options.key.secret);
      if (bytes.length < MIN_HS256_SECRET_BYTES) throw new Error(`TokenVerifier: HMAC secret must be at least ${MIN_HS256_SECRET_BYTES} bytes`);
      // A KeyObject (not a Uint8Array) sidesteps jose's cross-realm instanceof checks under Jest.
      this.key = createSecretKey(bytes);
      this.algorithms = checkAlgorithms(options.algorithms ?? ['HS256'], SYMMETRIC_ALGORITHMS);
    } else {
      this.key = createLocalJWKSet(readJwks(options.key.jwksFile));
      this.algorithms = checkAlgorithms(options.algorithms ?? ['RS256', 'ES256'], ASYMMETRIC_ALGORITHMS);
    }
  }

  static fromConfig(config: JwtAuthConfig): TokenVerifier {
    return new TokenVerifier({
      issuer: config.issuer,
      audience: config.audience,
      key: config.key.kind === 'hs256-secret' ? { secret: config.key.secret } : { jwksFile: config.key.path },
      algorithms: config.algorithms,
      clockToleranceSeconds: config.clockToleranceSeconds,
      tenantClaim: config.tenantClaim,
    });
  }

  async verify(token: string): Promise<Principal> {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw unauthenticated('token malformed');
    let payload: JWTPayload;
    try {
      // Overloads differ only by key type; the union is safe at runtime.
      const verified = await jwtVerify(token, this.key as KeyObject, {
        issuer: this.issuer,
        audience: this.audience,
        algorithms: this.algorithms,
        clockTolerance: this.clockTolerance,
        requiredClaims: ['exp', 'sub'],
      });
      payload = verified.payload;
    } catch (error) {
      throw unauthenticated(describeFailure(error));
    }
    return this.toPrincipal(payload);
  }

  private toPrincipal(payload: JWTPayload): Principal {
    const tenant = payload[this.tenantClaim];
    if (tenant === undefined || tenant === null || tenant === '') throw unauthenticated('token missing tenant claim');
    const scopes = readScopes(payload);
    if (!scopes) throw unauthenticated('token scope claim invalid');
    const parsed = principalSchema.safeParse({ tenant, subject: payload.sub, scopes });
    if (!parsed.success) {
      const field = parsed.error.issues[0]?.path[0];
      throw unauthenticated(field === 'tenant' ? 'token tenant claim invalid' : field === 'subject' ? 'token sub claim invalid' : 'token scope claim invalid');
    }
    return parsed.data;
  }
}

/** `scope` (RFC 8693, space-separated) wins over `scp` (array, or space-separated as some IdPs send it). */
function readScopes(payload: JWTPayload): string[] | undefined {
  const raw = payload['scope'] ?? payload['scp'];
  if (raw === undefined) return [];
  if (typeof raw === 'string') return [...new Set(raw.split(' ').filter(Boolean))];
  if (Array.isArray(raw) && raw.every((s) => typeof s === 'string')) return [...new Set(raw as string[])];
  return undefined;
}

function describeFailure(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'token expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'aud':
        return 'token audience mismatch';
      case 'iss':
        return 'token issuer mismatch';
      case 'nbf':
        return 'token not yet valid';
      case 'exp':
        return error.reason === 'missing' ? 'token missing exp claim' : 'token malformed';
      case 'sub':
        return 'token missing sub claim';
      default:
        return 'token malformed';
    }
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'token signature invalid';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'token algorithm not allowed';
  // A kid/alg no configured key serves: indistinguishable, for the caller, from a bad signature.
  if (error instanceof errors.JWKSNoMatchingKey) return 'token signature invalid';
  return 'token malformed';
}

function checkAlgorithms(algorithms: string[], family: readonly string[]): string[] {
  const bad = algorithms.filter((a) => !family.includes(a));
  if (algorithms.length === 0 || bad.length > 0) {
    throw new Error(`TokenVerifier: algorithms must be a non-empty subset of ${family.join(', ')} for this key type`);
  }
  return [...algorithms];
}

/** Reads and checks the JWKS at startup, so a bad file fails the boot, not the first request. */
function readJwks(path: string): JSONWebKeySet {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`AUTH_JWKS_FILE: cannot read JWKS from ${path}: ${(error as Error).message}`);
  }
  const keys = (parsed as { keys?: unknown })?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new Error(`AUTH_JWKS_FILE: ${path} must hold {"keys": [...]} with at least one key`);
  for (const key of keys as Record<string, unknown>[]) {
    if (typeof key !== 'object' || key === null || (key['kty'] !== 'RSA' && key['kty'] !== 'EC' && key['kty'] !== 'OKP')) {
      throw new Error(`AUTH_JWKS_FILE: ${path} may only hold RSA, EC or OKP public keys`);
    }
    if ('d' in key) throw new Error(`AUTH_JWKS_FILE: ${path} holds a private key; publish public keys only`);
  }
  return parsed as JSONWebKeySet;
}
