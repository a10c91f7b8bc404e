import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { BusClient, BusServer, type BusTransport } from '@apphost/bus';
import { echoContract, newRunId, QUEUE_GROUP, samplePayload, TIMEOUT_MS } from './echo.contract';

const repoRoot = path.resolve(__dirname, '..', '..');

/**
 * One hop between two services as the plane runs them: a typed bus request (zod on request and response, both sides)
 * with a small payload (~110 bytes), answered by an echo handler — in `plane` mode on the plane's own in-process bus,
 * in `services` mode by a responder in another process over the plane's NATS server. The design splits a path over
 * services that each own their state, so a path makes at least so many such hops one after another; a bench counts
 * them into its required floor (`hops`).
 */
export interface BusHop {
  op(): Promise<unknown>;
  stop(): Promise<void>;
}

export async function startBusHop(plane: { transport: BusTransport; natsUrl: string | null }): Promise<BusHop> {
  const runId = newRunId();
  const contract = echoContract(runId);
  const client = new BusClient({ transport: plane.transport, defaultTimeoutMs: TIMEOUT_MS });
  const payload = samplePayload();
  let stopServing: () => Promise<unknown>;
  if (plane.natsUrl === null) {
    const server = new BusServer({
      transport: plane.transport,
      instanceId: `bench-hop-${runId}`,
      queueGroup: `${QUEUE_GROUP}-${runId}`,
      logger: { error: (o, msg) => console.error(msg, o), warn: (o, msg) => console.error(msg, o) },
    });
    server.register(contract, (req) => req);
    server.start();
    stopServing = () => server.stop(1000);
  } else {
    const responder = await startResponder(runId, { NATS_URL: plane.natsUrl });
    stopServing = async () => responder.kill('SIGTERM');
  }
  await client.request(contract, payload);
  return {
    op: () => client.request(contract, payload),
    stop: async () => {
      await stopServing();
    },
  };
}

/** Spawns bus-responder.ts (on `env`'s NATS) and resolves once it prints "ready"; its stdin stays open so it dies with us. */
export function startResponder(runId: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-r', path.join(repoRoot, 'tools/register.cjs'), path.join(__dirname, 'bus-responder.ts'), runId], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  process.on('exit', () => child.kill('SIGTERM'));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('bus-responder did not become ready within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`bus-responder exited with code ${code} before it was ready`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.trim() !== 'ready') return;
      clearTimeout(timer);
      resolve(child);
    });
  });
}
