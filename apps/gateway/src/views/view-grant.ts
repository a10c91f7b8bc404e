import { AppHostError, GovernedReasons, viewGrantSchema } from '@apphost/contracts';

/** The grant header, checked for shape only (governed-operations compares it); any problem is the same 403, never echoing it. */
export function grantOf(header: string | undefined): string {
  if (typeof header !== 'string' || !viewGrantSchema.safeParse(header).success)
    throw new AppHostError('PERMISSION_DENIED', 'missing or malformed view grant', { details: GovernedReasons.details('VIEW_GRANT_INVALID') });
  return header;
}
