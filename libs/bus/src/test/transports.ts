import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect as connectTcp, createServer, type AddressInfo } from 'node:net';
import { defineContract } from '@apphost/contracts';
import { z } from 'zod';
import { InProcessTransport } from '../lib/transports/in-process.transport';
import { NatsTransport } from '../lib/transports/nats.transport';
import type { BusTransport } from '../lib/transports/transport';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** Opens a transport for one side of a test. In-process "connections" share one bus, as NATS clients share a server. */
export interface TransportFixture {
  name: 'nats' | 'in-process';
  open(label: string): Promise<BusTransport>;
  closeAll(): Promise<void>;
}

export function natsFixture(): TransportFixture {
  const opened: BusTransport[] = [];
  return {
    name: 'nats',
    open: async (label) => {
      const t = await NatsTransport.connect({ servers: NATS_URL, name: `bus-test-${label}` });
      opened.push(t);
      return t;
    },
    closeAll: async () => {
      await Promise.all(opened.splice(0).map((t) => t.close()));
    },
  };
}

export function inProcessFixture(): TransportFixture {
  const shared = new InProcessTransport();
  return {
    name: 'in-process',
    open: async () => shared,
    closeAll: async () => undefined,
  };
}

/** Subjects unique to one test run, so concurrent suites on the shared NATS server never cross. */
export function echoContract() {
  return defineContract({
    service: 'gateway',
    operation: `test-echo-${randomBytes(6).toString('hex')}`,
    version: 1,
    request: z.object({ text: z.string().max(2_000_000), n: z.number().int().optional(), delayMs: z.number().int().min(0).optional() }).strict(),
    response: z.object({ text: z.string(), n: z.number().int().optional() }),
    errors: ['CONFLICT'],
  });
}

export const silentLogger = { error: jest.fn(), warn: jest.fn() };

// @apphost/testing depends on this library, so its specs cannot import the test kit's `sleep` (a dependency cycle).
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A port nothing listens on now (for a NATS server this file owns). Same reason as `sleep` for not using the kit's. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** A nats-server of one test on a fixed port, so it can be killed and started again where clients reconnect. */
export interface OwnNatsServer {
  url: string;
  kill(): Promise<void>;
}

export async function startOwnNats(port: number): Promise<OwnNatsServer> {
  const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const url = `nats://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let attempt = 0; ; attempt++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connectTcp(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (up) break;
    if (attempt > 100) {
      child.kill('SIGKILL');
      throw new Error(`nats-server on ${port} did not start`);
    }
    await sleep(50);
  }
  return {
    url,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
