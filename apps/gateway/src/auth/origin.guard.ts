import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppHostError } from '@apphost/contracts';
import type { AuthenticatedRequest } from './auth.guard';
import { IS_BROWSER_ROUTE_KEY } from './browser-route.decorator';
import { normalizeOrigin } from './origin';

export { normalizeOrigin } from './origin';

/** Injection token for the normalized origin allowlist. */
export const ORIGIN_ALLOWLIST = Symbol('ORIGIN_ALLOWLIST');
/** Injection token: whether the gateway's own loopback origin is allowed too (development). */
export const ALLOW_OWN_ORIGIN = Symbol('ALLOW_OWN_ORIGIN');

// Fixed loopback names, never the Host header: a DNS-rebound page names its own host there and would pass.
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** The origins of a gateway listening on `port` on loopback (plain http: development never serves TLS). */
export function ownLoopbackOrigins(port: number): string[] {
  return LOOPBACK_NAMES.map((host) => `http://${host}:${port}`);
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * For @BrowserRoute() handlers only: a present Origin must be allowlisted, and a state-changing request must carry
 * one (browsers always send Origin on cross-site writes, so its absence there is treated as forged, i.e. CSRF).
 * Other routes are for non-browser clients and ignore Origin. In development the gateway's own origin (loopback, the
 * port the request arrived on) is allowed as well, so a page it serves may call it.
 */
@Injectable()
export class OriginGuard implements CanActivate {
  private readonly allowed: ReadonlySet<string>;

  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(ORIGIN_ALLOWLIST) allowlist: string[],
    @Inject(ALLOW_OWN_ORIGIN) private readonly allowOwnOrigin: boolean,
  ) {
    this.allowed = new Set(allowlist.map((o) => normalizeOrigin(o)).filter((o): o is string => o !== undefined));
  }

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    if (!this.reflector.getAllAndOverride<boolean>(IS_BROWSER_ROUTE_KEY, [context.getHandler(), context.getClass()])) return true;

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const header = request.headers['origin'];
    if (header === undefined) {
      if (STATE_CHANGING.has(request.method.toUpperCase())) throw new AppHostError('PERMISSION_DENIED', 'origin required');
      return true;
    }
    const origin = typeof header === 'string' ? normalizeOrigin(header) : undefined;
    if (!origin || !(this.allowed.has(origin) || this.isOwnOrigin(origin, request))) throw new AppHostError('PERMISSION_DENIED', 'origin not allowed');
    return true;
  }

  private isOwnOrigin(origin: string, request: AuthenticatedRequest): boolean {
    const port = request.socket?.localPort;
    return this.allowOwnOrigin && port !== undefined && ownLoopbackOrigins(port).includes(origin);
  }
}
