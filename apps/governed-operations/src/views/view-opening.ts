import {
  VIEW_POLICY_DEFAULTS,
  type ColdAction,
  type GovernedOpenView,
  type HostProfile,
  type ParsedRequestOf,
  type PlaceholderReason,
  type ViewPolicy,
  type ViewWidget,
} from '@apphost/contracts';
import { isReplaySafe } from '@apphost/policy';
import { principalDigestOf } from './view-access';
import type { ViewGeneration } from './view-collaborators';
import type { ViewRecord } from './view-records';

/* The shapes a bootstrap builds (the View record, the widget, the cold action) and the policies it applies. */

export type OpenRequest = ParsedRequestOf<typeof GovernedOpenView>;

/** The toolset binding a View was opened under (what `get-view` compares to detect a rebind). */
export interface Binding {
  profileId: string | null;
  bindingRevision: string | null;
  bindingGeneration: number | null;
}

const RERUN_WARNING = 'Running the tool again may repeat its effects (a new call, not a replay of the old one).';

/** Everything the steps of one bootstrap share. */
export interface Opening {
  request: OpenRequest;
  viewId: string;
  incarnation: number;
  widget: ViewWidget;
  policy: ViewPolicy;
  /** What the replay classification and the cold actions need to know of the tool. */
  tool: { nativeName: string; annotations?: unknown };
}

/** A placeholder's one action: `refresh` when the call is replay-safe under the profile, else `rerun` with a warning. */
export function coldActionOf(opening: Opening): { action: ColdAction; replaySafe: boolean } {
  const replaySafe = opening.tool.nativeName !== '' && isReplaySafe(opening.policy.replay, opening.tool);
  const action: ColdAction = replaySafe
    ? { kind: 'refresh', tool: opening.widget.tool, label: 'Refresh', warning: null }
    : { kind: 'rerun', tool: opening.widget.tool, label: 'Run tool again', warning: RERUN_WARNING };
  return { action, replaySafe };
}

/** A new View record: grantless and unleased until the bootstrap activates it. */
export function recordOf(
  opening: Opening,
  mode: ViewRecord['mode'],
  state: ViewRecord['state'],
  reason: PlaceholderReason | null,
  binding: Binding | null,
  generation: ViewGeneration | null,
): ViewRecord {
  return {
    v: 1,
    viewId: opening.viewId,
    mode,
    state,
    reason,
    principalDigest: principalDigestOf(opening.request.caller.principal),
    session: opening.request.session,
    incarnation: opening.incarnation,
    widget: opening.widget,
    viewGeneration: 1,
    serverId: opening.widget.toolsetId,
    profileId: binding?.profileId ?? null,
    bindingRevision: binding?.bindingRevision ?? null,
    bindingGeneration: binding?.bindingGeneration ?? null,
    generation,
    leaseId: null,
    released: generation === null,
    grantDigest: null,
    leaseMs: null,
    createdAt: new Date().toISOString(),
    expiresAt: null,
    teardownRequestedAt: null,
    actions: [],
    replaySafe: false,
    register: null,
    contextSequence: 0,
  };
}

export function widgetOf(request: OpenRequest, resourceUri: string, tool: string, toolsetId: string | null): ViewWidget {
  return {
    widgetId: `${request.eventId}:${request.functionCallId}`,
    eventId: request.eventId,
    functionCallId: request.functionCallId,
    resourceUri,
    tool,
    toolsetId,
  };
}

/** The View policy of a widget without a profile (legacy, or a profile gone): the defaults, so nothing is replay-safe. */
export function defaultPolicy(): ViewPolicy {
  return { ...VIEW_POLICY_DEFAULTS, replay: { tools: [], readOnlyHint: false } };
}

/**
 * The profile's resource policy as catalog-policy takes it. A prefix that is a bare scheme (`ui://`, "every ui://
 * resource") has no host and so matches nothing there: it admits the descriptor's own URI when that has the scheme.
 */
export function resourcePolicyOf(profile: HostProfile, resourceUri: string): { exact: string[]; prefixes: string[] } {
  const entries = profile.resourcePolicy.entries;
  const exact = entries.filter((e) => e.match === 'exact').map((e) => e.uri);
  const prefixes = entries.filter((e) => e.match === 'prefix').map((e) => e.uri);
  const schemeWide = prefixes.some((p) => /^[a-z][a-z0-9+.-]*:\/\/$/i.test(p) && resourceUri.toLowerCase().startsWith(p.toLowerCase()));
  return { exact: schemeWide ? [...exact, resourceUri] : exact, prefixes: prefixes.filter((p) => !/^[a-z][a-z0-9+.-]*:\/\/$/i.test(p)) };
}
