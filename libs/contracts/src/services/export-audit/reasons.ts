import { defineReasons, type ReasonOf } from '../../lib/errors';

/** Every `details.reason` export-audit (and the gateway's export routes) raise; each is also the reason code of a denied row. */
export const ExportReasons = defineReasons([
  'AUDIT_UNAVAILABLE',
  'STREAMING_NOT_SUPPORTED',
  'PURPOSE_NOT_AUTHORIZED',
  'TARGET_NOT_FOUND',
  'SESSION_NOT_ACTIVE',
  'STALE_INCARNATION',
  'NOT_PROFILE_BOUND',
  'BINDING_CHANGED',
  'BINDING_KEY_INVALID',
  'PROJECTION_NOT_ALLOWED',
  'EXPORT_TOO_LARGE',
  'RATE_LIMITED',
  'BULK_CAP_REACHED',
  'PERMIT_REVOKED',
  'PRINCIPAL_CHANGED',
  'PRINCIPAL_REVOKED',
  'OPERATION_REUSED',
  'EXPORT_DENIED',
  'SEALED_RECORD_UNAVAILABLE',
]);
export type ExportReason = ReasonOf<typeof ExportReasons>;
