/** The MCP Apps extension (SEP-1865, stable 2026-01-26) as it appears in client capabilities. */
export const UI_EXTENSION_ID = 'io.modelcontextprotocol/ui';
/** The one MIME type of an MCP App View resource. */
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';
