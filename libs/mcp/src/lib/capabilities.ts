import { APP_MIME_TYPE, UI_EXTENSION_ID } from './constants';

/**
 * `app-safe`: no sampling, elicitation or roots, ever: neither era advertises input capabilities the app path
 * would not fulfil. `full`: the model path's connection, which may receive input requests (form elicitation).
 */
export type ConnectionClass = 'app-safe' | 'full';

export interface AdvertisedCapabilities {
  elicitation?: { form: Record<string, never> };
  extensions?: Record<string, { mimeTypes: string[] }>;
}

/**
 * The capabilities a client advertises. The MCP Apps extension is advertised only by an `app-safe` connection
 * of a binding that is ready for it (`advertiseUi`); a `full` connection never carries it.
 */
export function buildClientCapabilities(
  connectionClass: ConnectionClass,
  advertiseUi: boolean,
  mimeTypes: readonly string[] = [APP_MIME_TYPE],
): AdvertisedCapabilities {
  if (connectionClass === 'full') return { elicitation: { form: {} } };
  if (!advertiseUi) return {};
  if (mimeTypes.length === 0 || !mimeTypes.includes(APP_MIME_TYPE)) throw new Error(`the MCP Apps advertisement must include ${APP_MIME_TYPE}`);
  return { extensions: { [UI_EXTENSION_ID]: { mimeTypes: [...mimeTypes] } } };
}

/** True when `capabilities` advertise the MCP Apps extension with the App MIME type. */
export function advertisesUiExtension(capabilities: unknown): boolean {
  const ext = (capabilities as { extensions?: Record<string, { mimeTypes?: unknown }> } | undefined)?.extensions?.[UI_EXTENSION_ID];
  return Array.isArray(ext?.mimeTypes) && ext.mimeTypes.includes(APP_MIME_TYPE);
}
