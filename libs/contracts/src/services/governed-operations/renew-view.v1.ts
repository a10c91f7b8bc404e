import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { viewCallerSchema, viewGrantSchema, viewIdSchema } from './view-values';

/**
 * `apphost.governed-operations.renew-view.v1`: extends a live View's lease by the profile's View lease, after the same
 * checks as any View operation: the grant (PERMISSION_DENIED `VIEW_GRANT_INVALID`), the principal (PERMISSION_DENIED
 * `PRINCIPAL_REVOKED`), and the View still live (FAILED_PRECONDITION `VIEW_REVOKED` with `details.revocation`).
 */
export const GovernedRenewView = defineContract({
  service: 'governed-operations',
  operation: 'renew-view',
  version: 1,
  request: z.strictObject({ caller: viewCallerSchema, viewId: viewIdSchema, grant: viewGrantSchema }),
  response: z.strictObject({ viewId: viewIdSchema, expiresAt: z.string() }),
  errors: ['NOT_FOUND', 'PERMISSION_DENIED', 'FAILED_PRECONDITION', 'UNAVAILABLE'],
});
