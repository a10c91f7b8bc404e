import { AppHostError, GovernedReasons, type HostProfile } from '@apphost/contracts';
import { offeredHostCapabilities, type ContentModality } from '@apphost/policy';
import { IMPLEMENTED_HOST_CAPABILITIES } from '../views/view-bootstrap';

/** The modality each MCP content block type is (`McpUiSupportedContentBlockModalities` names `resource_link` `resourceLink`). */
const MODALITY_OF_BLOCK: Readonly<Record<string, ContentModality>> = {
  text: 'text',
  image: 'image',
  audio: 'audio',
  resource: 'resource',
  resource_link: 'resourceLink',
};

/**
 * The modalities a View of `profile` was offered for `capability` — the very function its bootstrap advertised
 * with (`offeredHostCapabilities` over this build's implementation), so nothing is accepted that was not offered.
 */
export function advertisedModalities(profile: HostProfile, capability: 'message' | 'updateModelContext'): ReadonlySet<string> {
  const offered = offeredHostCapabilities(profile.hostCapabilities, IMPLEMENTED_HOST_CAPABILITIES).offered[capability];
  return new Set(Object.keys(offered ?? {}));
}

/**
 * Refuses content of a modality the View was not offered: each content block's type, and `structuredContent`
 * when present. INVALID_ARGUMENT `MODALITY_NOT_ADVERTISED` naming the modality.
 */
export function assertAdvertised(
  profile: HostProfile,
  capability: 'message' | 'updateModelContext',
  content: readonly { type: string }[],
  hasStructuredContent: boolean,
): void {
  const advertised = advertisedModalities(profile, capability);
  const used = content.map((block) => MODALITY_OF_BLOCK[block.type] ?? block.type);
  if (hasStructuredContent) used.push('structuredContent');
  const refused = used.find((modality) => !advertised.has(modality));
  if (refused === undefined) return;
  throw new AppHostError('INVALID_ARGUMENT', `${refused.slice(0, 64)} content was not advertised for ${capability}`, {
    details: GovernedReasons.details('MODALITY_NOT_ADVERTISED', { capability, modality: refused.slice(0, 64) }),
  });
}
