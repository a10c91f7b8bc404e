import { AppHostError } from '@apphost/contracts';
import { BusClient } from '../bus-client';
import { BusServer } from '../bus-server';
import { NatsTransport } from './nats.transport';
import { echoContract, NATS_URL, silentLogger, sleep } from '../../test/transports';

jest.setTimeout(20_000);

// The transport's own reply inbox and end-of-turn replies, on the shared NATS server.
describe('NatsTransport request-reply', () => {
  let serverTransport: NatsTransport;
  let clientTransport: NatsTransport;
  let server: BusServer;
  let bus: BusClient;
  const contract = echoContract();

  beforeAll(async () => {
    serverTransport = await NatsTransport.connect({ servers: NATS_URL, name: 'transport-spec-server' });
    clientTransport = await NatsTransport.connect({ servers: NATS_URL, name: 'transport-spec-client' });
    server = new BusServer({ transport: serverTransport, instanceId: 'i1', queueGroup: 'transport-spec', logger: silentLogger });
    server.register(contract, async (req) => {
      await sleep(req.delayMs ?? 0);
      return { text: req.text, n: req.n };
    });
    server.start();
    await server.ready();
    bus = new BusClient({ transport: clientTransport, defaultTimeoutMs: 5000 });
  });

  afterAll(async () => {
    await server.stop(500);
    await Promise.all([serverTransport.close(), clientTransport.close()]);
  });

  it('matches every reply to its own request when many are in flight and finish out of order', async () => {
    const replies = await Promise.all(Array.from({ length: 50 }, (_, n) => bus.request(contract, { text: `t${n}`, n, delayMs: (n * 7) % 13 })));
    expect(replies).toEqual(Array.from({ length: 50 }, (_, n) => ({ text: `t${n}`, n })));
  });

  it('drops a reply that arrives after its request timed out, and the next request still gets its own', async () => {
    const late = bus.request(contract, { text: 'late', delayMs: 300 }, { timeoutMs: 50 });
    await expect(late).rejects.toMatchObject({ code: 'OUTCOME_UNKNOWN', details: { transport: 'timeout' } });
    await sleep(350); // the late reply has arrived by now and found nobody waiting
    await expect(bus.request(contract, { text: 'next' })).resolves.toEqual({ text: 'next' });
  });

  it('fails a request in flight at once when its connection closes: it was published, so OUTCOME_UNKNOWN', async () => {
    const closing = await NatsTransport.connect({ servers: NATS_URL, name: 'transport-spec-closing' });
    const inFlight = new BusClient({ transport: closing, defaultTimeoutMs: 10_000 }).request(contract, { text: 'slow', delayMs: 2000 });
    await sleep(50);
    const started = performance.now();
    await closing.close();
    const error = await inFlight.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppHostError);
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN' });
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('sends a reply parked for the end of the turn before its transport drains', async () => {
    const t = await NatsTransport.connect({ servers: NATS_URL, name: 'transport-spec-drain' });
    const c = echoContract();
    const s = new BusServer({ transport: t, instanceId: 'i2', queueGroup: 'transport-spec-drain', logger: silentLogger });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    s.register(c, async (req) => {
      await gate;
      return { text: req.text };
    });
    s.start();
    await s.ready();
    const reply = bus.request(c, { text: 'last' });
    await sleep(50);
    release();
    await s.stop(1000); // the handler finished; its reply may still wait for the end of the turn
    await t.close();
    await expect(reply).resolves.toEqual({ text: 'last' });
  });
});
