import type { z } from 'zod';
import { AppHostError, invalidArgument, type Principal, type SessionKey } from '@apphost/contracts';

/** Validates one part of a request (body, query, a path parameter) before anything is sent: INVALID_ARGUMENT with its paths. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidArgument(what, result.error);
  return result.data;
}

export const sessionNotFound = () => new AppHostError('NOT_FOUND', 'session not found');

/**
 * The session key of a runtime request: tenant and user always come from the verified token, so a principal only
 * reaches its own sessions; naming another user is indistinguishable from absence (404).
 */
export function ownSessionKey(principal: Principal, appName: string, sessionId: string, userId: string | undefined): SessionKey {
  if (userId !== undefined && userId !== principal.subject) throw sessionNotFound();
  return { tenant: principal.tenant, appName, userId: principal.subject, sessionId };
}
