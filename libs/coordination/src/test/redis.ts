import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/** The shared Redis the behavioural suite runs against. */
export const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** A prefix no other run uses, so this run can delete exactly its own keys. */
export function uniquePrefix(): string {
  return `apphost:test:coordination:${randomUUID()}:`;
}

/** Deletes every key under `prefix` (SCAN, never KEYS, so a shared Redis is not blocked). */
export async function deleteKeysWithPrefix(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

// freePort, sleep and eventually stay here: @apphost/testing depends on this library through runtime, so
// importing the test kit would be a dependency cycle.

/** A loopback port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A throwaway, non-persistent redis-server on `port`, resolved once it accepts connections. */
export function startRedisServer(port: number, extraArgs: string[] = []): Promise<ChildProcess> {
  const args = ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1', ...extraArgs];
  const child = spawn('/usr/bin/redis-server', args, {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`redis-server did not start on ${port}: ${output}`)), 10_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => fail(new Error(`redis-server exited with ${code}: ${output}`)));
    child.once('error', fail);
  });
}

/** SIGKILLs the child (a crash, not a shutdown) and waits until it is gone. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it is true or `timeoutMs` passes; returns the last answer. */
export async function eventually(probe: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}
