import { cascadeParticipantContract } from '../lifecycle-store/cascade-participant.v1';

/**
 * `apphost.export-audit.revoke.v1` / `.purge.v1`: export-audit as a deletion-cascade participant. `revoke` fences the
 * incarnation's export permits (an export not yet released is denied); `purge` applies the configured retention to
 * the incarnation's audit rows. Both are idempotent.
 */
export const ExportAuditRevoke = cascadeParticipantContract('export-audit', 'revoke');
export const ExportAuditPurge = cascadeParticipantContract('export-audit', 'purge');
