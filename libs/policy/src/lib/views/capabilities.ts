import type { HostProfile, OfferedHostCapabilities } from '@apphost/contracts';

/** A content modality of `message` / `updateModelContext` (`McpUiSupportedContentBlockModalities`). */
export type ContentModality = keyof NonNullable<HostProfile['hostCapabilities']['message']>;

/**
 * What this AppHost build implements of the MCP Apps host capabilities (the caller's constant). `message` and
 * `updateModelContext` list the modalities implemented (empty: not implemented at all).
 */
export type ImplementedHostCapabilities = {
  serverTools: boolean;
  serverResources: boolean;
  logging: boolean;
  message: readonly ContentModality[];
  updateModelContext: readonly ContentModality[];
  openLinks: boolean;
};

/** Every capability a profile can declare, in the order `dropped` lists them. */
const CAPABILITIES = ['openLinks', 'serverTools', 'serverResources', 'logging', 'message', 'updateModelContext'] as const;

/**
 * The `hostCapabilities` a View is offered: what the profile declares AND this build implements, nothing else.
 * Boolean declarations become empty capability objects (no `listChanged`: list-changed relays are not offered);
 * `message`/`updateModelContext` carry, in the MCP Apps shape, the modalities the profile declares `true` that this
 * build implements (each becomes `{}`). `dropped` names what the profile declared but is not offered — a whole
 * capability (`message`) or one modality of it (`message.image`) — so the caller can log it.
 */
export function offeredHostCapabilities(
  declared: HostProfile['hostCapabilities'],
  implemented: ImplementedHostCapabilities,
): { offered: OfferedHostCapabilities; dropped: string[] } {
  const offered: OfferedHostCapabilities = {};
  const dropped: string[] = [];
  for (const name of CAPABILITIES) {
    const value = declared[name];
    if (value === undefined || value === false) continue;
    const supported = implemented[name];
    if (supported === false || (Array.isArray(supported) && supported.length === 0)) {
      dropped.push(name);
      continue;
    }
    if (name === 'message' || name === 'updateModelContext') {
      const modalities = intersect(declared[name] ?? {}, implemented[name]);
      offered[name] = modalities.wire;
      dropped.push(...modalities.dropped.map((m) => `${name}.${m}`));
    } else offered[name] = {};
  }
  return { offered, dropped };
}

type DeclaredModalities = NonNullable<HostProfile['hostCapabilities']['message']>;

/** `{ text: true, image: true }` ∩ `['text']` → `{ text: {} }` (McpUiSupportedContentBlockModalities), `image` dropped. */
function intersect(declared: DeclaredModalities, implemented: readonly ContentModality[]): { wire: Record<string, Record<string, never>>; dropped: string[] } {
  const wire: Record<string, Record<string, never>> = {};
  const dropped: string[] = [];
  for (const [modality, supported] of Object.entries(declared)) {
    if (supported !== true) continue;
    if (implemented.includes(modality as ContentModality)) wire[modality] = {};
    else dropped.push(modality);
  }
  return { wire, dropped };
}
