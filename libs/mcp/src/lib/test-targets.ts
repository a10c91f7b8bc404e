import path from 'node:path';
import type { StdioTarget } from './target';

// libs/mcp may not import the testing library (module boundaries), so its specs start the fixtures by path.
const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

/** A fixture MCP server of libs/testing over stdio (test use only). */
export function fixtureTarget(name: 'stateful-nonce' | 'capability-gated' | 'hostile', args: string[] = []): StdioTarget {
  return {
    kind: 'stdio',
    command: process.execPath,
    args: ['-r', path.join(ROOT, 'tools', 'register.cjs'), path.join(ROOT, 'libs', 'testing', 'src', 'fixtures', `${name}.ts`), ...args],
    cwd: ROOT,
  };
}
