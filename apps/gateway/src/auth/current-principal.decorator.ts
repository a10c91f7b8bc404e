import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { AppHostError, type Principal } from '@apphost/contracts';
import type { AuthenticatedRequest } from './auth.guard';

/** The verified caller the auth guard attached; on a @Public() route there is none, which is a coding error. */
export const CurrentPrincipal = createParamDecorator((_data: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new AppHostError('INTERNAL', 'no authenticated principal on this route');
  return principal;
});
