import { BusClient, type NatsTransport } from '@apphost/bus';
import {
  connectTestTransport,
  dropSchemasWithPrefix,
  eventually,
  freePort,
  spawnTs,
  TEST_DATABASE_URL,
  TEST_NATS_URL,
  uniquePrefix,
  waitForExit,
} from '@apphost/testing';

type Child = ReturnType<typeof spawnTs>;

/** The real lifecycle-store and sealed-result-store, each as its own process (a pod), on one schema prefix and this file's bus namespace. */
export interface StoreProcesses {
  prefix: string;
  bus: BusClient;
  stop(): Promise<void>;
}

async function launch(name: 'lifecycle-store' | 'sealed-result-store', prefix: string, env: Record<string, string>): Promise<Child> {
  const port = await freePort();
  const child = spawnTs(`apps/${name}/src/main.ts`, {
    NATS_URL: TEST_NATS_URL,
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA_PREFIX: prefix,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(port),
    LOG_LEVEL: 'warn',
    ...env,
  });
  try {
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`${name} exited: ${child.output().stderr}`);
      return (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200;
    }, 80_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return child;
}

async function stopChild(child: Child | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await waitForExit(child, 15_000);
}

/** Starts both stores (in parallel: they do not depend on each other to boot) and a bus client to them. */
export async function startStoreProcesses(env: { lifecycle?: Record<string, string>; sealed?: Record<string, string> } = {}): Promise<StoreProcesses> {
  const prefix = uniquePrefix();
  const children: Child[] = [];
  let transport: NatsTransport | undefined;
  const stop = async () => {
    await transport?.close();
    await Promise.all(children.map(stopChild));
    await dropSchemasWithPrefix(prefix);
  };
  try {
    const started = await Promise.allSettled([launch('lifecycle-store', prefix, env.lifecycle ?? {}), launch('sealed-result-store', prefix, env.sealed ?? {})]);
    for (const s of started) if (s.status === 'fulfilled') children.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    transport = await connectTestTransport('store-processes-client');
    return { prefix, bus: new BusClient({ transport, defaultTimeoutMs: 10_000 }), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
