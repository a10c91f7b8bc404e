/** How to reach one MCP server. Header values here are already resolved: callers never persist them. */
export interface StdioTarget {
  kind: 'stdio';
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
}

export interface HttpTarget {
  kind: 'http';
  url: string;
  headers?: Record<string, string>;
}

export type McpTarget = StdioTarget | HttpTarget;

/** `legacy`: the 2025 `initialize` handshake; `auto`: probe with `server/discover`; a revision: pin it. */
export type ProtocolMode = 'legacy' | 'auto' | '2026-07-28';
