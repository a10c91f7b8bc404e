import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppHostError, type Principal } from '@apphost/contracts';
import { IS_PUBLIC_KEY } from './public.decorator';
import { REQUIRED_SCOPES_KEY } from './require-scopes.decorator';
import { TokenVerifier } from './token-verifier';
import { ViewTokens } from './view-tokens';

/** The slice of the HTTP request the guards use (kept structural: express types are not a dependency). */
export interface AuthenticatedRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  /** The accepted connection: its local port is the port the gateway listens on. */
  socket?: { localPort?: number };
  principal?: Principal;
}

const BEARER = /^Bearer +([^\s]+) *$/i;

/**
 * Global guard: every route needs a verified bearer token unless it is @Public(); @RequireScopes() then applies.
 * A view token (its `typ` says so) is checked by the gateway's own view-token key, any other by the configured
 * verifier: neither ever accepts the other's tokens.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(TokenVerifier) private readonly verifier: TokenVerifier,
    @Inject(ViewTokens) private readonly viewTokens: ViewTokens,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC_KEY, targets)) return true;
    // Fail closed: a transport this guard does not understand gets no implicit access.
    if (context.getType() !== 'http') throw new AppHostError('UNAUTHENTICATED', 'unsupported transport');

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const header = request.headers['authorization'];
    const match = typeof header === 'string' ? BEARER.exec(header) : null;
    if (!match) throw new AppHostError('UNAUTHENTICATED', 'missing bearer token');
    const token = match[1];
    const principal = ViewTokens.isViewToken(token) ? await this.viewTokens.verify(token) : await this.verifier.verify(token);
    request.principal = principal;

    const required = this.reflector.getAllAndMerge<string[]>(REQUIRED_SCOPES_KEY, targets) ?? [];
    const missing = required.filter((scope) => !principal.scopes.includes(scope));
    if (missing.length > 0) {
      throw new AppHostError('PERMISSION_DENIED', `missing required scope: ${missing.join(', ')}`, { details: { requiredScopes: missing } });
    }
    return true;
  }
}
