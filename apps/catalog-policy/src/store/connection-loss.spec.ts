import { randomUUID } from 'node:crypto';
import { CatalogApproveTool, CatalogListPins } from '@apphost/contracts';
import { openServiceDatabase, type ServiceDatabase } from '@apphost/persistence';
import {
  backendsOf,
  bootService,
  dropSchemasWithPrefix,
  eventually,
  expectAppError,
  lockTable,
  startPrivateNats,
  storeApplicationName,
  TEST_DATABASE_URL,
  terminateBackends,
  uniquePrefix,
  type PrivateNats,
  type ServiceUnderTest,
} from '@apphost/testing';
import pino from 'pino';
import { toListing } from '../compose/listing';
import { resolveOneClass } from '../compose/two-class';
import { CatalogSchema1767400000000 } from '../migrations/1767400000000-catalog-schema';
import { PinningService } from '../pinning/pinning.service';
import { catalogPolicyService } from '../service';
import { CATALOG_SCHEMA } from './catalog-store';
import { PinsRepository } from './pins.repository';

// Real PostgreSQL and NATS; the fault resolves in well under a second.
jest.setTimeout(30_000);

describe('catalog-policy when PostgreSQL terminates a backend inside a transaction', () => {
  const prefix = uniquePrefix();
  const schema = `${prefix}${CATALOG_SCHEMA}`;
  let nats: PrivateNats;
  let service: ServiceUnderTest;
  let db: ServiceDatabase;
  const generation = {
    generationId: randomUUID(),
    fence: 1,
    ownerInstanceId: 'reg-1',
    toolsetId: 'cut-ts',
    bindingGeneration: 1,
    connectionClass: 'app-safe' as const,
  };
  const candidates = (description: string) => resolveOneClass('cut-ts', toListing(generation, [{ name: 'echo', description }])).candidates;

  beforeAll(async () => {
    nats = await startPrivateNats();
    service = await bootService(catalogPolicyService, prefix, { NATS_URL: nats.url });
    // The service's own store opened beside it, to put a quarantined candidate in place.
    db = await openServiceDatabase({
      url: TEST_DATABASE_URL,
      schema,
      serviceName: catalogPolicyService.name,
      migrations: [CatalogSchema1767400000000],
      poolSize: 1,
    });
    const pinning = new PinningService(new PinsRepository(db), pino({ level: 'silent' }));
    await pinning.evaluate('cut-ts', candidates('Echoes.'));
    await pinning.evaluate('cut-ts', candidates('Echoes, drifted.'));
  }, 60_000);

  afterAll(async () => {
    await db?.close();
    await service?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  it('fails the in-flight approval UNAVAILABLE (retryable), the process serves on, and the retry approves', async () => {
    const approve = () => service.client.request(CatalogApproveTool, { toolsetId: 'cut-ts', name: 'echo', approvedBy: 'admin' });
    // The approval locks its pins, then its write to the pin log waits on this lock: terminated mid-transaction.
    const lock = await lockTable(schema, 'tool_pin_events');
    try {
      const approving = approve();
      const blocked = await eventually(async () => {
        const waiting = (await backendsOf(storeApplicationName('catalog-policy', schema))).filter((b) => b.waitingOnLock);
        return waiting.length > 0 ? waiting : undefined;
      }, 5_000);
      await terminateBackends(blocked.map((b) => b.pid));
      const failure = await expectAppError(approving, 'UNAVAILABLE');
      expect(failure.retryable).toBe(true);
      expect(failure.details).toMatchObject({ phase: 'transaction', pgCode: '57P01' });
    } finally {
      await lock.release();
    }
    const { pins } = await service.client.request(CatalogListPins, { toolsetId: 'cut-ts' });
    expect(pins[0]).toMatchObject({ state: 'QUARANTINED' });
    await expect(approve()).resolves.toMatchObject({ pins: [expect.objectContaining({ state: 'APPROVED', candidateFingerprint: null })] });
  });
});
