import { AppHostError, RegistryReasons, type ToolsetSpec } from '@apphost/contracts';
import type { McpTarget } from '@apphost/mcp';
import type { RegistryConfig } from '../registry.config';

/** Resolves a stored spec into a connection target: stdio only if allowed, header references from configured secrets. */
export function resolveTarget(spec: ToolsetSpec, config: RegistryConfig): McpTarget {
  const c = spec.connection;
  if (c.kind === 'stdio') {
    if (!stdioAllowed(c, config)) throw stdioRefused();
    return { kind: 'stdio', command: c.command, args: c.args, env: c.env, cwd: c.cwd };
  }
  const headers: Record<string, string> = {};
  for (const [name, ref] of Object.entries(c.headers)) {
    const value = config.secrets.get(ref.secretRef);
    if (value === undefined)
      throw new AppHostError('FAILED_PRECONDITION', `secret ${ref.secretRef} is not configured`, {
        details: RegistryReasons.details('SECRET_MISSING', { secretRef: ref.secretRef }),
      });
    headers[name] = value;
  }
  return { kind: 'http', url: c.url, headers };
}

type StdioConnection = Extract<ToolsetSpec['connection'], { kind: 'stdio' }>;

/** Every stdio spec when REGISTRY_ALLOW_STDIO is set; otherwise only one equal to an allowlist entry in every field. */
export function stdioAllowed(connection: StdioConnection, config: Pick<RegistryConfig, 'allowStdio' | 'stdioAllowlist'>): boolean {
  if (config.allowStdio) return true;
  return config.stdioAllowlist.some(
    (entry) =>
      entry.command === connection.command &&
      entry.cwd === connection.cwd &&
      sameList(entry.args, connection.args) &&
      sameList(Object.entries(entry.env).sort().flat(), Object.entries(connection.env).sort().flat()),
  );
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

export function stdioRefused(): AppHostError {
  return new AppHostError(
    'PERMISSION_DENIED',
    'stdio toolsets run commands on the registry host and are not allowed by this deployment (REGISTRY_ALLOW_STDIO)',
    {
      details: RegistryReasons.details('STDIO_NOT_ALLOWED'),
    },
  );
}
