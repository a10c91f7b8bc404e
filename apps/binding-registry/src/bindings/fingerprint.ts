import { canonicalDigest } from '@apphost/canonical-json';
import type { HostProfile } from '@apphost/contracts';

/** The optional View fields a profile may set; each is fingerprinted only when present. */
const VIEW_FIELDS = ['views', 'rpc', 'idempotency', 'replay', 'registers', 'audit'] as const;

/**
 * The profile's fingerprint subset, the part of a host profile that `bindingRevision` signs (so a change to any of
 * it is a new revision): extension settings and modalities, callback and connection policy, policy and limits
 * revisions, sealed-store and lifecycle-store namespace/revision, and the View fields (`views`, `rpc`,
 * `idempotency`, `replay`, `registers`, `audit`, `callbackPolicy.message|requestTeardown`) only when set, so a profile
 * without them keeps the revision it had before they existed. Ephemeral generations (binding generation,
 * connection generation) are deliberately not in it, so rebinding or reconnecting under the same key keeps the revision.
 */
export function fingerprintSubset(profile: HostProfile) {
  const viewFields = definedOnly(Object.fromEntries(VIEW_FIELDS.map((field) => [field, profile[field]])));
  return {
    ...viewFields,
    extension: profile.extension,
    modalities: { message: profile.hostCapabilities.message ?? null, updateModelContext: profile.hostCapabilities.updateModelContext ?? null },
    callbackPolicy: definedOnly(profile.callbackPolicy),
    connectionPolicy: profile.connectionPolicy,
    resourcePolicyRevision: profile.resourcePolicy.revision,
    limitsRevision: profile.limits.revision,
    sealedStore: { namespace: profile.providers.sealedResultStore.namespace ?? null, revision: profile.providers.sealedResultStore.revision ?? null },
    lifecycleStore: { namespace: profile.providers.lifecycleStore.namespace ?? null, revision: profile.providers.lifecycleStore.revision ?? null },
  };
}

/** `value` without its undefined members (an unset optional field), which canonical JSON refuses. */
function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** The unkeyed digest a `bindingRevision` signs: the toolset, its profile id and the fingerprint subset. */
export function bindingDigest(toolsetId: string, profileId: string, profile: HostProfile): string {
  return canonicalDigest('binding-revision', { toolsetId, profileId, fingerprint: fingerprintSubset(profile) });
}

export const BINDING_REVISION_PURPOSE = 'binding-revision';
