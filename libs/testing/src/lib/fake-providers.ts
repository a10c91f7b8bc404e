import { connectTestTransport } from './service-harness';
import { BusServer } from '@apphost/bus';
import { describeContract, type DescribeResponse, type ServiceName } from '@apphost/contracts';
import type { Stoppable } from './boot';

/** A service that only answers `describe`, with the stores (and so the store identity) it reports. */
export interface FakeProvider {
  service: ServiceName;
  stores?: DescribeResponse['stores'];
}

/**
 * Services that only answer `describe` on their own queue group: the providers a host profile references that a
 * suite does not run for real. A bare service name reports no stores. One NATS connection for all of them.
 */
export async function startFakeProviders(natsUrl: string, providers: readonly (ServiceName | FakeProvider)[]): Promise<Stoppable> {
  const transport = await connectTestTransport('fake-providers', { natsUrl });
  const servers = providers.map((provider) => {
    const { service, stores = [] } = typeof provider === 'string' ? { service: provider } : provider;
    const instanceId = `fake-${service}`;
    const server = new BusServer({ transport, instanceId, queueGroup: service, logger: { error: () => undefined, warn: () => undefined } });
    server.register(describeContract(service), (): DescribeResponse => ({
      service,
      version: 'test',
      instanceId,
      transport: 'nats',
      startedAt: new Date().toISOString(),
      stores,
    }));
    server.start();
    return server;
  });
  await transport.flush(); // subscribed at the server before anyone is told the fakes are there
  return {
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop(100)));
      await transport.close();
    },
  };
}
