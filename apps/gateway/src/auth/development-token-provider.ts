import { createSecretKey, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SignJWT } from 'jose';
import { principalSchema, type Principal } from '@apphost/contracts';
import { ALL_SCOPES } from './scopes';
import { TokenVerifier } from './token-verifier';

export const DEV_TOKEN_ISSUER = 'apphost-dev';
export const DEV_TOKEN_AUDIENCE = 'apphost';

export interface DevelopmentTokenProviderOptions {
  /** The host the gateway listens on; anything but loopback is refused. */
  bindHost: string;
  /** Where the minted token is written (mode 0600), for local tools to pick up. */
  tokenFile?: string;
  tenant?: string;
  subject?: string;
  scopes?: string[];
  ttlSeconds?: number;
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** True only for addresses that cannot be reached from another machine: 127.0.0.0/8, ::1, `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (mapped) return isIP(mapped[1]) === 4 && loopback.check(mapped[1], 'ipv4');
  const family = isIP(h);
  if (family === 4) return loopback.check(h, 'ipv4');
  if (family === 6) return loopback.check(h, 'ipv6');
  return false;
}

/**
 * Local development only: a per-process random HS256 key, so its tokens die with the process and are never
 * accepted by any other gateway. Refuses to exist unless the gateway binds to loopback.
 */
export class DevelopmentTokenProvider {
  readonly verifier: TokenVerifier;

  private constructor(
    private readonly key: KeyObject,
    private readonly principal: Principal,
    private readonly ttlSeconds: number,
    readonly tokenFile: string | undefined,
  ) {
    this.verifier = new TokenVerifier({ issuer: DEV_TOKEN_ISSUER, audience: DEV_TOKEN_AUDIENCE, key: { secret: key.export() }, algorithms: ['HS256'] });
  }

  static async create(options: DevelopmentTokenProviderOptions): Promise<DevelopmentTokenProvider> {
    if (!isLoopbackHost(options.bindHost)) {
      throw new Error(
        `development auth refused: the gateway binds to ${JSON.stringify(options.bindHost)}, which is not loopback ` +
          '(127.0.0.0/8, ::1, localhost). Use AUTH_MODE=jwt for any reachable deployment.',
      );
    }
    const principal = principalSchema.safeParse({
      tenant: options.tenant ?? 'dev',
      subject: options.subject ?? 'developer',
      scopes: options.scopes ?? [...ALL_SCOPES],
    });
    if (!principal.success) throw new Error(`development auth: invalid principal: ${principal.error.message}`);
    const ttlSeconds = options.ttlSeconds ?? 86_400;
    if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) throw new Error('development auth: ttlSeconds must be a positive integer');

    const provider = new DevelopmentTokenProvider(createSecretKey(randomBytes(32)), principal.data, ttlSeconds, options.tokenFile);
    if (options.tokenFile) await writePrivateFile(options.tokenFile, `${await provider.mint()}\n`);
    return provider;
  }

  /** A fresh token for the configured principal. */
  mint(): Promise<string> {
    return new SignJWT({ tenant: this.principal.tenant, scope: this.principal.scopes.join(' ') })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(DEV_TOKEN_ISSUER)
      .setAudience(DEV_TOKEN_AUDIENCE)
      .setSubject(this.principal.subject)
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.key);
  }
}

/** Written beside the target then renamed, so the token is never readable by others, even briefly. */
async function writePrivateFile(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(temp, content, { mode: 0o600, flag: 'wx' });
  await chmod(temp, 0o600); // the umask may have narrowed nothing, but never trust an inherited mode
  await rename(temp, path);
}
