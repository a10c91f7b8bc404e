import { spawn } from 'node:child_process';
import path from 'node:path';
import { AppHostError } from '@apphost/contracts';
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

/** A fixture of libs/testing over Streamable HTTP in its own process (`--http=0`), on a free 127.0.0.1 port (test use only). */
export async function startFixtureOverHttp(
  name: 'stateful-nonce' | 'capability-gated' | 'hostile',
  env: Record<string, string> = {},
): Promise<{ url: string; stop(): Promise<void> }> {
  const target = fixtureTarget(name, ['--http=0']);
  const child = spawn(target.command, target.args, {
    cwd: target.cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`${name} did not listen`)), 20_000);
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => l.startsWith('FIXTURE_LISTENING '));
        if (line) {
          clearTimeout(timer);
          resolve((JSON.parse(line.slice('FIXTURE_LISTENING '.length)) as { url: string }).url);
        }
      });
      child.once('exit', () => reject(new Error(`${name} exited before listening`)));
    });
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Awaits a rejection and returns it as the AppHostError it must be (test use only). libs/mcp may not import the
 * testing library's `expectAppError` (module boundaries), so its specs share this one.
 */
export async function typedRejection(promise: Promise<unknown>): Promise<AppHostError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppHostError);
  return error as AppHostError;
}
