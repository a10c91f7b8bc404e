import { randomBytes, randomUUID } from 'node:crypto';
import { viewPolicyOf, type HostProfile, type SessionKey } from '@apphost/contracts';
import type { ViewContext } from '../view-rpc/ports';
import type { StoredView, ViewRecord } from '../views/view-records';
import { session as defaultSession, testProfile } from './fake-plane';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A live View record as a bootstrap leaves it (the grant only as a digest), for specs of the View RPC pieces. */
export function liveViewRecord(overrides: Partial<ViewRecord> & { session?: SessionKey } = {}): ViewRecord {
  const now = Date.now();
  return {
    v: 1,
    viewId: `vw-${hex(16)}`,
    mode: 'live',
    state: 'ACTIVE',
    reason: null,
    principalDigest: hex(32),
    session: defaultSession,
    incarnation: 1,
    widget: { widgetId: '1:fc-1', eventId: 1, functionCallId: 'fc-1', resourceUri: 'ui://app/view.html', tool: 'nonce-view', toolsetId: 'ts' },
    viewGeneration: 1,
    serverId: 'server',
    profileId: 'p',
    bindingRevision: 'r1',
    bindingGeneration: 1,
    generation: { generationId: randomUUID(), fence: 1, ownerInstanceId: 'owner-1', connectionClass: 'app-safe' },
    leaseId: randomUUID(),
    released: false,
    grantDigest: hex(32),
    leaseMs: 60_000,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 60_000).toISOString(),
    teardownRequestedAt: null,
    actions: [],
    replaySafe: false,
    register: null,
    contextSequence: 0,
    ...overrides,
  };
}

/** The context the View RPC runs an operation in: the View as read, the test profile (with `fields` over it) and its policy. */
export function viewContextOf(view: StoredView, fields: Partial<HostProfile> = {}): ViewContext {
  const profile = { ...testProfile(), ...fields };
  return { view, profile, policy: viewPolicyOf(profile) };
}
