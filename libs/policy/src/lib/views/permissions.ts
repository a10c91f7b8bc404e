/** `_meta.ui.permissions` members and the Permissions Policy feature each one asks for, in output order. */
const FEATURES = [
  ['camera', 'camera'],
  ['microphone', 'microphone'],
  ['geolocation', 'geolocation'],
  ['clipboardWrite', 'clipboard-write'],
] as const;

/**
 * The View iframe's `allow` attribute from `_meta.ui.permissions`: each known member present as an object (the
 * spec's `{}`) or `true` grants its feature to the frame's own origin; anything else, and any unknown member, is
 * ignored. Not an object → `''` (nothing granted).
 */
export function iframeAllow(permissions: unknown): string {
  if (typeof permissions !== 'object' || permissions === null || Array.isArray(permissions)) return '';
  const requested = permissions as Record<string, unknown>;
  return FEATURES.filter(([member]) => isGranted(requested[member]))
    .map(([, feature]) => feature)
    .join('; ');
}

function isGranted(value: unknown): boolean {
  return value === true || (typeof value === 'object' && value !== null && !Array.isArray(value));
}
