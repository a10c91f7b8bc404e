import net from 'node:net';

/** Resolves after `ms`; with `signal`, rejects ("cancelled") as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new Error('cancelled'));
      },
      { once: true },
    );
  });
}

/**
 * Polls `probe` until it returns a value other than `undefined` (`false` counts as "not yet"), or fails with the
 * last error after `timeoutMs`.
 */
export async function eventually<T>(probe: () => Promise<T | undefined | false>, timeoutMs: number, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await sleep(intervalMs);
  }
}

/** A loopback port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A promise together with its resolver and rejecter. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * A held-open point in a race. Arm `action` on a fault point: it marks `reached` and waits until the test calls
 * `release()`; `promise` is the release itself (a one-shot signal the test can await).
 */
export interface Latch {
  action: () => Promise<void>;
  reached: Promise<void>;
  promise: Promise<void>;
  release(): void;
}

export function latch(): Latch {
  const released = deferred();
  const reached = deferred();
  return {
    action: async () => {
      reached.resolve();
      await released.promise;
    },
    reached: reached.promise,
    promise: released.promise,
    release: () => released.resolve(),
  };
}
