import { SetMetadata } from '@nestjs/common';

export const IS_BROWSER_ROUTE_KEY = 'apphost:auth:browser-route';

/** Marks a route browsers call, so the origin guard enforces the allowlist and CSRF rules on it. */
export const BrowserRoute = () => SetMetadata(IS_BROWSER_ROUTE_KEY, true);
