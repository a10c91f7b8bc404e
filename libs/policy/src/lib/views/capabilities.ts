import type { HostProfile, OfferedHostCapabilities } from '@apphost/contracts';

/** What this AppHost build implements of the MCP Apps host capabilities (the caller's constant). */
export type ImplementedHostCapabilities = {
  serverTools: boolean;
  serverResources: boolean;
  logging: boolean;
  message: boolean;
  updateModelContext: boolean;
  openLinks: boolean;
};

/** Every capability a profile can declare, in the order `dropped` lists them. */
const CAPABILITIES = ['openLinks', 'serverTools', 'serverResources', 'logging', 'message', 'updateModelContext'] as const;

/**
 * The `hostCapabilities` a View is offered: what the profile declares AND this build implements, nothing else.
 * Boolean declarations become empty capability objects (no `listChanged`: list-changed relays are not offered);
 * `message`/`updateModelContext` carry the declared modalities in the MCP Apps shape (each modality declared `true`
 * becomes `{}`, a `false` one is left out). `dropped` names what the profile declared but is not offered, so the
 * caller can log it.
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
    if (!implemented[name]) {
      dropped.push(name);
      continue;
    }
    if (name === 'message' || name === 'updateModelContext') offered[name] = wireModalities(declared[name] ?? {});
    else offered[name] = {};
  }
  return { offered, dropped };
}

type DeclaredModalities = NonNullable<HostProfile['hostCapabilities']['message']>;

/** `{ text: true, image: false }` → `{ text: {} }` (McpUiSupportedContentBlockModalities). */
function wireModalities(declared: DeclaredModalities): Record<string, Record<string, never>> {
  const wire: Record<string, Record<string, never>> = {};
  for (const [modality, supported] of Object.entries(declared)) if (supported === true) wire[modality] = {};
  return wire;
}
