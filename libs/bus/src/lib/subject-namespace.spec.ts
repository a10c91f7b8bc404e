import { AppHostError } from '@apphost/contracts';
import { BusClient } from './bus-client';
import { BusServer } from './bus-server';
import { NatsTransport } from './transports/nats.transport';
import { SubjectNamespace } from './transports/subject-namespace';
import { echoContract, NATS_URL, silentLogger } from '../test/transports';

describe('subject namespaces on one NATS server', () => {
  const opened: NatsTransport[] = [];
  const servers: BusServer[] = [];
  const connect = async (subjectPrefix: string) => {
    const t = await NatsTransport.connect({ servers: NATS_URL, name: `ns-${subjectPrefix || 'none'}`, subjectPrefix });
    opened.push(t);
    return t;
  };
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.stop(500)));
    await Promise.all(opened.splice(0).map((t) => t.close()));
  });

  it('serves only requests of its own namespace: another namespace sees no responders, not a foreign answer', async () => {
    const contract = echoContract();
    for (const prefix of ['plane_a', 'plane_b']) {
      const server = new BusServer({ transport: await connect(prefix), instanceId: prefix, queueGroup: 'same-service', logger: silentLogger });
      server.register(contract, () => ({ text: prefix }));
      server.start();
      await server.ready();
      servers.push(server);
    }
    for (const prefix of ['plane_a', 'plane_b']) {
      const client = new BusClient({ transport: await connect(prefix), defaultTimeoutMs: 2000 });
      for (let i = 0; i < 5; i++) expect(await client.request(contract, { text: 'who' })).toEqual({ text: prefix });
    }
    const outsider = new BusClient({ transport: await connect('plane_c'), defaultTimeoutMs: 2000 });
    await expect(outsider.request(contract, { text: 'who' })).rejects.toMatchObject({ code: 'UNAVAILABLE' } satisfies Partial<AppHostError>);
  });

  it('moves a large reply in chunks inside its namespace: the chunk subject is namespaced like every other', async () => {
    const contract = echoContract();
    const text = 'z'.repeat(3 * 1024 * 1024);
    const server = new BusServer({ transport: await connect('plane_t'), instanceId: 'plane_t', queueGroup: 'same-service', logger: silentLogger });
    server.register(contract, () => ({ text }));
    server.start();
    await server.ready();
    servers.push(server);
    const inside = await connect('plane_t');
    const chunkSubjects: string[] = [];
    const spying = Object.create(inside) as NatsTransport;
    spying.request = (subject, data, options) => {
      if (subject.includes('.transfer.')) chunkSubjects.push(subject);
      return inside.request(subject, data, options);
    };
    const reply = await new BusClient({ transport: spying, defaultTimeoutMs: 5000 }).request(contract, { text: 'big' });
    expect(reply.text === text).toBe(true);
    expect(chunkSubjects.length).toBe(7);
    // The same chunk subject outside the namespace reaches nobody.
    const outsider = await connect('');
    await expect(outsider.request(chunkSubjects[0], new TextEncoder().encode('{}'), { timeoutMs: 1000, headers: {} })).rejects.toMatchObject({
      failure: 'no-responders',
    });
  });

  it('refuses a prefix that is not one NATS token', () => {
    for (const bad of ['a.b', 'a b', 'x*', '>', 'ä']) expect(() => new SubjectNamespace(bad)).toThrow(/subject prefix/);
    expect(new SubjectNamespace('').wire('apphost.x.v1')).toBe('apphost.x.v1');
    expect(new SubjectNamespace('t_1').wire('apphost.x.v1')).toBe('t_1.apphost.x.v1');
    expect(new SubjectNamespace('t_1').logical('t_1.apphost.x.v1')).toBe('apphost.x.v1');
  });
});
