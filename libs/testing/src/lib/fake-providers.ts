import { connectTestTransport } from './service-harness';
import { BusServer } from '@apphost/bus';
import { describeContract, LifecycleWhichReferencesAreAppended, type DescribeResponse, type SealedReferenceQuery, type ServiceName } from '@apphost/contracts';
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

/** A ledger that knows only the references a test says were appended (for suites that do not run lifecycle-store). */
export interface FakeLedger extends Stoppable {
  /** Records that event `eventId` of the record's session and incarnation references it. */
  append(reference: SealedReferenceQuery, eventId: number): void;
}

/**
 * Answers `lifecycle-store.which-references-are-appended.v1` in the lifecycle-store's queue group, from the
 * references `append` registered (matched on session, incarnation, function call and record id, like the real
 * ledger). Nothing else of the lifecycle-store is served. A real ledger is in the plane suites (tools/plane).
 */
export async function startFakeLedger(natsUrl?: string): Promise<FakeLedger> {
  const transport = await connectTestTransport('fake-ledger', { natsUrl });
  const appended = new Map<string, number>();
  const keyOf = (r: SealedReferenceQuery) => JSON.stringify([r.session, r.incarnation, r.functionCallId, r.recordId]);
  const server = new BusServer({
    transport,
    instanceId: 'fake-ledger',
    queueGroup: 'lifecycle-store',
    logger: { error: () => undefined, warn: () => undefined },
  });
  server.register(LifecycleWhichReferencesAreAppended, ({ references }) => ({
    appended: references.flatMap((r) => {
      const eventId = appended.get(keyOf(r));
      return eventId === undefined ? [] : [{ recordId: r.recordId, eventId }];
    }),
  }));
  server.start();
  await transport.flush();
  return {
    append: (reference, eventId) => void appended.set(keyOf(reference), eventId),
    stop: async () => {
      await server.stop(100);
      await transport.close();
    },
  };
}
