import net from 'node:net';
import { connectTestTransport } from './service-harness';
import { BusClient, NatsTransport } from '@apphost/bus';
import { AppHostError, describeContract } from '@apphost/contracts';
import type { ServiceDefinition } from '@apphost/runtime';
import { startPrivateNats, type PrivateNats } from '../fixtures/private-nats';
import { deferred, eventually, freePort, latch, sleep } from './async';
import { bootServices, startInOrder } from './boot';
import { expectAppError } from './expect-error';
import { startFakeProviders } from './fake-providers';
import { uniquePrefix } from './environment';

describe('async helpers', () => {
  it('sleep waits, and rejects at once when its signal aborts', async () => {
    const t0 = Date.now();
    await sleep(30);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
    const abort = new AbortController();
    const slept = sleep(10_000, abort.signal);
    abort.abort();
    await expect(slept).rejects.toThrow('cancelled');
  });

  it('eventually treats undefined and false as "not yet"', async () => {
    let calls = 0;
    await expect(eventually(async () => ++calls >= 3, 2000, 10)).resolves.toBe(true);
    expect(calls).toBe(3);
    await expect(eventually(async () => false, 50, 10)).rejects.toThrow(/not met within 50 ms/);
  });

  it('freePort returns a loopback port that can be listened on', async () => {
    const port = await freePort();
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    expect((server.address() as net.AddressInfo).port).toBe(port);
    await new Promise((resolve) => server.close(resolve));
  });

  it('deferred settles from outside; latch holds an action until released', async () => {
    const d = deferred<number>();
    d.resolve(7);
    await expect(d.promise).resolves.toBe(7);
    const failed = deferred();
    failed.reject(new Error('no'));
    await expect(failed.promise).rejects.toThrow('no');

    const l = latch();
    const order: string[] = [];
    const held = l.action().then(() => order.push('action done'));
    await l.reached;
    order.push('reached');
    l.release();
    await held;
    await l.promise;
    expect(order).toEqual(['reached', 'action done']);
  });
});

describe('expectAppError', () => {
  const failing = (code: 'NOT_FOUND' | 'CONFLICT', reason?: string) => Promise.reject(new AppHostError(code, 'x', reason ? { details: { reason } } : {}));

  it('returns the typed error, checking its code and reason when given', async () => {
    expect((await expectAppError(failing('NOT_FOUND'))).code).toBe('NOT_FOUND');
    expect((await expectAppError(failing('CONFLICT', 'EVENT_CONFLICT'), 'CONFLICT', 'EVENT_CONFLICT')).details).toEqual({ reason: 'EVENT_CONFLICT' });
    await expectAppError(() => {
      throw new AppHostError('NOT_FOUND', 'sync');
    }, 'NOT_FOUND');
  });

  it('fails on success, on another error type, and on another code or reason', async () => {
    await expect(expectAppError(Promise.resolve(1))).rejects.toThrow(/got success/);
    await expect(expectAppError(Promise.reject(new Error('plain')), 'NOT_FOUND')).rejects.toThrow(/expected an AppHostError NOT_FOUND, got Error: plain/);
    await expect(expectAppError(failing('CONFLICT'), 'NOT_FOUND')).rejects.toThrow();
    await expect(expectAppError(failing('CONFLICT', 'A'), 'CONFLICT', 'B')).rejects.toThrow();
  });
});

describe('startInOrder', () => {
  const step =
    (log: string[], name: string, fail = false) =>
    async () => {
      if (fail) throw new Error(`${name} failed`);
      log.push(`start ${name}`);
      return { stop: async () => void log.push(`stop ${name}`) };
    };

  it('starts in order and stops in reverse', async () => {
    const log: string[] = [];
    const all = await startInOrder([step(log, 'a'), step(log, 'b'), step(log, 'c')]);
    expect(all.started).toHaveLength(3);
    await all.stop();
    expect(log).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
  });

  it('on a failure stops what it started, last first, and rethrows', async () => {
    const log: string[] = [];
    await expect(startInOrder([step(log, 'a'), step(log, 'b'), step(log, 'c', true), step(log, 'd')])).rejects.toThrow('c failed');
    expect(log).toEqual(['start a', 'start b', 'stop b', 'stop a']);
  });

  it('stop() stops every one even when one fails, then throws that failure', async () => {
    const log: string[] = [];
    const broken = async () => ({ stop: async () => Promise.reject(new Error('stuck')) });
    const all = await startInOrder([step(log, 'a'), broken, step(log, 'c')]);
    await expect(all.stop()).rejects.toThrow('stuck');
    expect(log).toEqual(['start a', 'start c', 'stop c', 'stop a']);
  });
});

describe('bootServices and startFakeProviders (private NATS)', () => {
  let nats: PrivateNats;
  let transport: NatsTransport;
  let bus: BusClient;
  const describes = (service: 'export-audit' | 'gateway') => bus.request(describeContract(service), {}, { timeoutMs: 2000 });

  beforeAll(async () => {
    nats = await startPrivateNats();
    transport = await connectTestTransport('kit-spec', { natsUrl: nats.url });
    bus = new BusClient({ transport, defaultTimeoutMs: 2000 });
  });

  afterAll(async () => {
    await transport.close();
    await nats.stop();
  });

  const plain: ServiceDefinition = { name: 'export-audit', requires: [] };
  const broken: ServiceDefinition = {
    name: 'gateway',
    requires: [],
    openStores: async () => {
      throw new Error('the store is down');
    },
  };

  it('boots services in order under one prefix, and stops them all', async () => {
    const booted = await bootServices(uniquePrefix(), { audit: { definition: plain, env: { INSTANCE_ID: 'audit-1' } } }, { NATS_URL: nats.url });
    expect(await describes('export-audit')).toMatchObject({ service: 'export-audit', instanceId: 'audit-1' });
    expect(booted.services.audit.running.url).toMatch(/^http:\/\//);
    await booted.stop();
    await expectAppError(describes('export-audit'), 'UNAVAILABLE');
  });

  it('stops the services it booted when a later one fails', async () => {
    await expect(bootServices(uniquePrefix(), { audit: { definition: plain }, gateway: { definition: broken } }, { NATS_URL: nats.url })).rejects.toThrow(
      'the store is down',
    );
    await expectAppError(describes('export-audit'), 'UNAVAILABLE');
  });

  it('fakes answer describe with the stores given (none for a bare name)', async () => {
    const fakes = await startFakeProviders(nats.url, [
      'gateway',
      { service: 'export-audit', stores: [{ kind: 'postgres', name: 'export-audit', ready: true, namespace: 'ns-x' }] },
    ]);
    try {
      expect(await describes('gateway')).toMatchObject({ service: 'gateway', stores: [] });
      expect(await describes('export-audit')).toMatchObject({ stores: [{ namespace: 'ns-x' }] });
    } finally {
      await fakes.stop();
    }
  });
});
