import { cascadeParticipantContract } from '../lifecycle-store/cascade-participant.v1';

/**
 * `apphost.governed-operations.revoke.v1` / `.purge.v1`: governed-operations as a deletion-cascade participant
 * (lifecycle-store's `LIFECYCLE_CASCADE_PARTICIPANTS`). It keeps no durable data; both are idempotent.
 */
export const GovernedRevoke = cascadeParticipantContract('governed-operations', 'revoke');
export const GovernedPurge = cascadeParticipantContract('governed-operations', 'purge');
