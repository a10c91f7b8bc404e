import type { z } from 'zod';
import { AppHostError, invalidArgument, type Principal, type SessionKey, type ViewCaller } from '@apphost/contracts';
import { SCOPES } from '../auth/scopes';

/** Validates one part of a request (body, query, a path parameter) before anything is sent: INVALID_ARGUMENT with its paths. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidArgument(what, result.error);
  return result.data;
}

/** What `userId` means on every route that takes it (`ownSessionKey`), for the OpenAPI document. */
export const USER_ID_DESCRIPTION =
  "The session's user. Defaults to the token's subject; a principal with scope `delegate` may name any user of its tenant; anyone else naming another user, and a view token naming another session, reads as 404";

export const sessionNotFound = () => new AppHostError('NOT_FOUND', 'session not found');

/**
 * The user a request acts for: the token's subject, or the `userId` a `delegate` principal names (its tenant is
 * always the token's). Naming another user without `delegate`, or from a view token (`restrictedTo`), is
 * indistinguishable from absence (404).
 */
export function actingUserId(principal: Principal, userId: string | undefined): string {
  if (userId === undefined || userId === principal.subject) return principal.subject;
  if (principal.restrictedTo === undefined && principal.scopes.includes(SCOPES.delegate)) return userId;
  throw sessionNotFound();
}

/**
 * The session key of a request: the tenant always comes from the verified token and the user from `actingUserId`,
 * so a principal reaches only its own sessions (or, with `delegate`, those of the user it names); a view token
 * reaches only the one session it was minted for. Anything else reads as 404.
 */
export function ownSessionKey(principal: Principal, appName: string, sessionId: string, userId: string | undefined): SessionKey {
  const restricted = principal.restrictedTo;
  if (restricted && (restricted.appName !== appName || restricted.sessionId !== sessionId)) throw sessionNotFound();
  return { tenant: principal.tenant, appName, userId: actingUserId(principal, userId), sessionId };
}

/**
 * Who calls a View operation, by the same rule as `ownSessionKey`. A view token's session restriction travels in
 * `principal.restrictedTo` and is enforced against the View's session by whoever resolves it.
 */
export function viewCallerOf(principal: Principal, userId?: string): ViewCaller {
  return { principal, userId: actingUserId(principal, userId) };
}

/**
 * The principal the services behind a route see for a request on `session`: the caller itself, or, when a delegate
 * acts for another user, that user (same tenant, the caller's scopes but `delegate`). Connection security domains,
 * confirmation permits and catalog caches are keyed by it, so the users one runtime serves never share them.
 */
export function actingPrincipal(principal: Principal, session: SessionKey): Principal {
  if (session.userId === principal.subject) return principal;
  return { tenant: principal.tenant, subject: session.userId, scopes: principal.scopes.filter((scope) => scope !== SCOPES.delegate) };
}
