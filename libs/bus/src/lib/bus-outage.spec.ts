import { AppHostError } from '@apphost/contracts';
import { BusClient, isNoResponders } from './bus-client';
import { BusServer } from './bus-server';
import { NatsTransport } from './transports/nats.transport';
import { echoContract, freePort, silentLogger, sleep, startOwnNats, type OwnNatsServer } from '../test/transports';

jest.setTimeout(20_000);

async function failureOf(promise: Promise<unknown>): Promise<{ error: AppHostError; elapsedMs: number }> {
  const started = performance.now();
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppHostError);
  return { error: error as AppHostError, elapsedMs: performance.now() - started };
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** What a caller may see: the envelope as it crosses the bus and the HTTP edge. No subject belongs in it. */
function expectNoSubject(error: AppHostError): void {
  expect(JSON.stringify(error.toEnvelope())).not.toMatch(/apphost\./);
}

// A NATS server of this file alone, killed and restarted on the same port: the clients reconnect to it.
describe('bus while NATS is down', () => {
  let port: number;
  let nats: OwnNatsServer;
  let server: BusServer;
  let serverTransport: NatsTransport;
  let clientTransport: NatsTransport;
  let bus: BusClient;
  let contract: ReturnType<typeof echoContract>;
  const handled: string[] = [];

  beforeAll(async () => {
    port = await freePort();
    nats = await startOwnNats(port);
    contract = echoContract();
    serverTransport = await NatsTransport.connect({ servers: nats.url, name: 'outage-server' });
    clientTransport = await NatsTransport.connect({ servers: nats.url, name: 'outage-client' });
    server = new BusServer({ transport: serverTransport, instanceId: 'i1', queueGroup: 'outage-svc', logger: silentLogger });
    server.register(contract, async (req) => {
      handled.push(req.text);
      await sleep(req.delayMs ?? 0);
      return { text: req.text };
    });
    server.start();
    await serverTransport.flush();
    bus = new BusClient({ transport: clientTransport, defaultTimeoutMs: 5000 });
  });

  afterAll(async () => {
    await server.stop(500);
    await Promise.all([serverTransport.close(), clientTransport.close()]);
    await nats.kill();
  });

  it('answers no responders with UNAVAILABLE naming the service, never the subject', async () => {
    const { error, elapsedMs } = await failureOf(bus.request(echoContract(), { text: 'x' }));
    expect(error).toMatchObject({ code: 'UNAVAILABLE', retryable: true, message: 'gateway is unavailable; the request was not executed' });
    expect(isNoResponders(error)).toBe(true);
    expect(elapsedMs).toBeLessThan(100);
    expectNoSubject(error);
  });

  it('answers a published request without a reply in time with OUTCOME_UNKNOWN, without the subject', async () => {
    const { error } = await failureOf(bus.request(contract, { text: 'slow', delayMs: 400 }, { timeoutMs: 100 }));
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', retryable: false });
    expect(isNoResponders(error)).toBe(false);
    expectNoSubject(error);
    await until(() => handled.includes('slow'), 2000);
  });

  it('refuses a request at once while disconnected, and never sends it after the reconnect', async () => {
    await expect(bus.request(contract, { text: 'before' })).resolves.toEqual({ text: 'before' });
    await nats.kill();
    await until(() => !clientTransport.isConnected(), 2000);

    const whileDown = failureOf(bus.request(contract, { text: 'while-down' }, { timeoutMs: 5000 }));
    // The server comes back well within the request's timeout: a buffered request would be delivered now.
    nats = await startOwnNats(port);
    const { error, elapsedMs } = await whileDown;
    expect(error).toMatchObject({ code: 'UNAVAILABLE', retryable: true, details: { transport: 'disconnected', service: 'gateway' } });
    expect(elapsedMs).toBeLessThan(100);
    expectNoSubject(error);

    await until(() => clientTransport.isConnected() && serverTransport.isConnected(), 5000);
    await serverTransport.flush();
    await expect(bus.request(contract, { text: 'after' })).resolves.toEqual({ text: 'after' });
    expect(handled.filter((text) => text === 'while-down')).toEqual([]);
  });

  it('refuses a request on a closed connection with UNAVAILABLE, without the subject', async () => {
    const closed = await NatsTransport.connect({ servers: nats.url, name: 'outage-closed' });
    await closed.close();
    const { error } = await failureOf(new BusClient({ transport: closed, defaultTimeoutMs: 1000 }).request(contract, { text: 'closed' }));
    expect(error).toMatchObject({ code: 'UNAVAILABLE', retryable: true, details: { transport: 'closed' } });
    expectNoSubject(error);
  });
});
