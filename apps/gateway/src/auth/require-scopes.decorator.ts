import { SetMetadata } from '@nestjs/common';

export const REQUIRED_SCOPES_KEY = 'apphost:auth:scopes';

/** The principal must hold every listed scope (on a class, it adds to each handler's own list). */
export const RequireScopes = (...scopes: string[]) => SetMetadata(REQUIRED_SCOPES_KEY, scopes);
