import { parseRegistryConfig } from '../registry.config';
import { stdioAllowed } from './target';

const connection = (over: Partial<{ command: string; args: string[]; env: Record<string, string>; cwd: string }> = {}) => ({
  kind: 'stdio' as const,
  command: 'node_modules/.bin/mcp-server-basic-vanillajs',
  args: ['--stdio'],
  env: {},
  ...over,
});

describe('stdioAllowed', () => {
  const allowlisted = parseRegistryConfig({
    REGISTRY_STDIO_ALLOWLIST: JSON.stringify([{ command: 'node_modules/.bin/mcp-server-basic-vanillajs', args: ['--stdio'] }]),
  });

  it('allows every stdio spec when REGISTRY_ALLOW_STDIO is set', () => {
    expect(stdioAllowed(connection({ command: 'anything' }), parseRegistryConfig({ REGISTRY_ALLOW_STDIO: 'true' }))).toBe(true);
  });

  it('refuses stdio by default', () => {
    expect(stdioAllowed(connection(), parseRegistryConfig({}))).toBe(false);
  });

  it('allows exactly an allowlisted spec', () => {
    expect(stdioAllowed(connection(), allowlisted)).toBe(true);
  });

  it.each([
    ['another command', connection({ command: 'node_modules/.bin/mcp-pdf-server' })],
    ['an extra argument', connection({ args: ['--stdio', '--evil'] })],
    ['other arguments', connection({ args: [] })],
    ['an environment variable', connection({ env: { NODE_OPTIONS: '--require=/tmp/x.js' } })],
    ['a working directory', connection({ cwd: '/tmp' })],
  ])('refuses an allowlisted command with %s', (_what, spec) => {
    expect(stdioAllowed(spec, allowlisted)).toBe(false);
  });

  it('names the variable when the allowlist is not a list of specs', () => {
    expect(() => parseRegistryConfig({ REGISTRY_STDIO_ALLOWLIST: '{"command":"x"}' })).toThrow(/REGISTRY_STDIO_ALLOWLIST/);
  });
});
