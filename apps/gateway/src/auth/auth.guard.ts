import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppHostError, type Principal } from '@apphost/contracts';
import { IS_PUBLIC_KEY } from './public.decorator';
import { REQUIRED_SCOPES_KEY } from './require-scopes.decorator';
import { TokenVerifier } from './token-verifier';

/** The slice of the HTTP request the guards use (kept structural: express types are not a dependency). */
export interface AuthenticatedRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  principal?: Principal;
}

const BEARER = /^Bearer +([^\s]+) *$/i;

/** Global guard: every route needs a verified bearer token unless it is @Public(); @RequireScopes() then applies. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(TokenVerifier) private readonly verifier: TokenVerifier,
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
    const principal = await this.verifier.verify(match[1]);
    request.principal = principal;

    const required = this.reflector.getAllAndMerge<string[]>(REQUIRED_SCOPES_KEY, targets) ?? [];
    const missing = required.filter((scope) => !principal.scopes.includes(scope));
    if (missing.length > 0) {
      throw new AppHostError('PERMISSION_DENIED', `missing required scope: ${missing.join(', ')}`, { details: { requiredScopes: missing } });
    }
    return true;
  }
}
