import { cascadeParticipantContract } from '../lifecycle-store/cascade-participant.v1';

/**
 * `apphost.binding-registry.revoke.v1` / `.purge.v1`: binding-registry as a deletion-cascade participant. Both end
 * every connection generation keyed by the session (up to the deleted incarnation) on every owner, so its server
 * processes exit at once instead of at idle eviction; `purge` repeats it for one acquired in between. Idempotent.
 */
export const RegistryRevoke = cascadeParticipantContract('binding-registry', 'revoke');
export const RegistryPurge = cascadeParticipantContract('binding-registry', 'purge');
