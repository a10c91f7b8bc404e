import { createSecretKey, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { decodeProtectedHeader, errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { AppHostError, appNameSchema, incarnationSchema, principalSchema, sessionIdSchema, type Principal } from '@apphost/contracts';
import { MIN_VIEW_TOKEN_SECRET_BYTES } from './auth.config';
import { SCOPES } from './scopes';

/** Its own issuer, audience and JOSE `typ`, so a view token is never taken for an organisation JWT, nor one for it. */
export const VIEW_TOKEN_ISSUER = 'apphost-gateway';
export const VIEW_TOKEN_AUDIENCE = 'apphost-view';
export const VIEW_TOKEN_TYPE = 'apphost-view+jwt';
export const VIEW_TOKEN_DEFAULT_TTL_SECONDS = 5 * 60;
export const VIEW_TOKEN_MAX_TTL_SECONDS = 15 * 60;

// The same bound as the organisation verifier: a hostile token never reaches the JOSE parser.
const MAX_TOKEN_LENGTH = 16 * 1024;
// Replicas share the secret, not a clock: a little skew between them must not fail a fresh token.
const CLOCK_TOLERANCE_SECONDS = 5;

/**
 * The one session a view token is for, in the incarnation that was ACTIVE when it was minted; `userId` is the
 * session's user, who becomes the token's subject.
 */
export interface ViewTokenGrant {
  tenant: string;
  userId: string;
  appName: string;
  sessionId: string;
  incarnation: number;
}

export interface MintedViewToken {
  token: string;
  expiresAt: string;
  principal: Principal;
}

export interface ViewTokensOptions {
  /** The HS256 secret shared by every gateway replica (`GATEWAY_VIEW_TOKEN_SECRET`); absent: a random one for this process. */
  secret?: Uint8Array;
  /** Milliseconds since the epoch (tests move it). */
  now?: () => number;
}

const unauthenticated = (message: string) => new AppHostError('UNAUTHENTICATED', message);

/**
 * Mints and verifies view tokens: short-lived HS256 JWTs whose principal holds scope `view` only and is restricted
 * to one session (`principal.restrictedTo`). Minting is a gateway route (`POST /v1/sessions/{id}/view-tokens`);
 * verification runs beside the organisation's verifier, chosen by the token's `typ` header.
 */
export class ViewTokens {
  /** True when no secret was configured: tokens die with this process and no other replica accepts them. */
  readonly ephemeral: boolean;
  private readonly key: KeyObject;
  private readonly now: () => number;

  constructor(options: ViewTokensOptions = {}) {
    const secret = options.secret ?? randomBytes(32);
    if (secret.length < MIN_VIEW_TOKEN_SECRET_BYTES) throw new Error(`ViewTokens: the secret must be at least ${MIN_VIEW_TOKEN_SECRET_BYTES} bytes`);
    // A KeyObject (not a Uint8Array) sidesteps jose's cross-realm instanceof checks under Jest.
    this.key = createSecretKey(Buffer.from(secret));
    this.ephemeral = options.secret === undefined;
    this.now = options.now ?? Date.now;
  }

  /** Whether `token` claims to be a view token (unverified: it only decides which verifier checks it). */
  static isViewToken(token: string): boolean {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return false;
    try {
      return decodeProtectedHeader(token).typ === VIEW_TOKEN_TYPE;
    } catch {
      return false;
    }
  }

  async mint(grant: ViewTokenGrant, ttlSeconds = VIEW_TOKEN_DEFAULT_TTL_SECONDS): Promise<MintedViewToken> {
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > VIEW_TOKEN_MAX_TTL_SECONDS) {
      throw new AppHostError('INVALID_ARGUMENT', `ttlSeconds must be an integer from 1 to ${VIEW_TOKEN_MAX_TTL_SECONDS}`);
    }
    const principal = principalSchema.parse({
      tenant: grant.tenant,
      subject: grant.userId,
      scopes: [SCOPES.view],
      restrictedTo: { appName: grant.appName, sessionId: grant.sessionId, incarnation: grant.incarnation },
    });
    const issuedAt = Math.floor(this.now() / 1000);
    const expiresAt = issuedAt + ttlSeconds;
    const token = await new SignJWT({ tenant: principal.tenant, scope: SCOPES.view, app: grant.appName, sid: grant.sessionId, inc: grant.incarnation })
      .setProtectedHeader({ alg: 'HS256', typ: VIEW_TOKEN_TYPE })
      .setIssuer(VIEW_TOKEN_ISSUER)
      .setAudience(VIEW_TOKEN_AUDIENCE)
      .setSubject(principal.subject)
      .setJti(randomUUID())
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(this.key);
    return { token, expiresAt: new Date(expiresAt * 1000).toISOString(), principal };
  }

  /** The restricted principal of a valid view token; anything else is a safe UNAUTHENTICATED. */
  async verify(token: string): Promise<Principal> {
    if (!ViewTokens.isViewToken(token)) throw unauthenticated('token malformed');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        issuer: VIEW_TOKEN_ISSUER,
        audience: VIEW_TOKEN_AUDIENCE,
        typ: VIEW_TOKEN_TYPE,
        algorithms: ['HS256'],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(this.now()),
        requiredClaims: ['exp', 'iat', 'sub', 'jti'],
      }));
    } catch (error) {
      throw unauthenticated(
        error instanceof errors.JWTExpired
          ? 'token expired'
          : error instanceof errors.JWSSignatureVerificationFailed
            ? 'token signature invalid'
            : 'token invalid',
      );
    }
    return toRestrictedPrincipal(payload);
  }
}

/** Only the exact shape `mint` writes is accepted: scope `view` alone, one session, a lifetime within the maximum. */
function toRestrictedPrincipal(payload: JWTPayload): Principal {
  const lifetime = (payload.exp ?? 0) - (payload.iat ?? 0);
  if (payload['scope'] !== SCOPES.view || lifetime < 1 || lifetime > VIEW_TOKEN_MAX_TTL_SECONDS) throw unauthenticated('token invalid');
  const appName = appNameSchema.safeParse(payload['app']);
  const sessionId = sessionIdSchema.safeParse(payload['sid']);
  const incarnation = incarnationSchema.safeParse(payload['inc']);
  const principal = principalSchema.safeParse({
    tenant: payload['tenant'],
    subject: payload.sub,
    scopes: [SCOPES.view],
    restrictedTo:
      appName.success && sessionId.success && incarnation.success
        ? { appName: appName.data, sessionId: sessionId.data, incarnation: incarnation.data }
        : undefined,
  });
  if (!principal.success || !principal.data.restrictedTo) throw unauthenticated('token invalid');
  return principal.data;
}
