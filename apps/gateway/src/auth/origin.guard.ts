import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppHostError } from '@apphost/contracts';
import type { AuthenticatedRequest } from './auth.guard';
import { IS_BROWSER_ROUTE_KEY } from './browser-route.decorator';
import { normalizeOrigin } from './origin';

export { normalizeOrigin } from './origin';

/** Injection token for the normalized origin allowlist. */
export const ORIGIN_ALLOWLIST = Symbol('ORIGIN_ALLOWLIST');

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * For @BrowserRoute() handlers only: a present Origin must be allowlisted, and a state-changing request must carry
 * one (browsers always send Origin on cross-site writes, so its absence there is treated as forged, i.e. CSRF).
 * Other routes are for non-browser clients and ignore Origin.
 */
@Injectable()
export class OriginGuard implements CanActivate {
  private readonly allowed: ReadonlySet<string>;

  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(ORIGIN_ALLOWLIST) allowlist: string[],
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
    if (!origin || !this.allowed.has(origin)) throw new AppHostError('PERMISSION_DENIED', 'origin not allowed');
    return true;
  }
}
