import { canonicalDigest } from '@apphost/canonical-json';
import type { HostProfile } from '@apphost/contracts';

/**
 * The profile's fingerprint subset, the part of a host profile that `bindingRevision` signs (so a change to any of
 * it is a new revision): extension settings and modalities, callback and connection policy, policy and limits
 * revisions, sealed-store and lifecycle-store namespace/revision. Ephemeral generations (binding generation,
 * connection generation) are deliberately not in it, so rebinding or reconnecting under the same key keeps the revision.
 */
export function fingerprintSubset(profile: HostProfile) {
  return {
    extension: profile.extension,
    modalities: { message: profile.hostCapabilities.message ?? null, updateModelContext: profile.hostCapabilities.updateModelContext ?? null },
    callbackPolicy: profile.callbackPolicy,
    connectionPolicy: profile.connectionPolicy,
    resourcePolicyRevision: profile.resourcePolicy.revision,
    limitsRevision: profile.limits.revision,
    sealedStore: { namespace: profile.providers.sealedResultStore.namespace ?? null, revision: profile.providers.sealedResultStore.revision ?? null },
    lifecycleStore: { namespace: profile.providers.lifecycleStore.namespace ?? null, revision: profile.providers.lifecycleStore.revision ?? null },
  };
}

/** The unkeyed digest a `bindingRevision` signs: the toolset, its profile id and the fingerprint subset. */
export function bindingDigest(toolsetId: string, profileId: string, profile: HostProfile): string {
  return canonicalDigest('binding-revision', { toolsetId, profileId, fingerprint: fingerprintSubset(profile) });
}

export const BINDING_REVISION_PURPOSE = 'binding-revision';
