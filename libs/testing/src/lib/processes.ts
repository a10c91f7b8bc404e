import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT, TEST_BUS_PREFIX } from './environment';

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a TypeScript entry point of the repo as its own Node process (the way `npm start` and pods do), inside this
 * test file's bus namespace unless `env.BUS_SUBJECT_PREFIX` says otherwise.
 */
export function spawnTs(entry: string, env: Record<string, string | undefined>, args: string[] = []): ChildProcess & { output(): ProcessResult } {
  const child = spawn(process.execPath, ['-r', path.join(REPO_ROOT, 'tools', 'register.cjs'), path.join(REPO_ROOT, entry), ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, BUS_SUBJECT_PREFIX: TEST_BUS_PREFIX, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return Object.assign(child, { output: () => ({ code: child.exitCode, signal: child.signalCode, stdout, stderr }) });
}

export function waitForExit(child: ChildProcess & { output(): ProcessResult }, timeoutMs: number): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.output());
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`process did not exit within ${timeoutMs} ms:\n${child.output().stdout}\n${child.output().stderr}`));
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      // Let the pipes flush their last chunks.
      setImmediate(() => resolve(child.output()));
    });
  });
}
