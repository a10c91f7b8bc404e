import { RegistryGetToolset, RegistryPutToolset } from '@apphost/contracts';
import { backendsOf, eventually, expectAppError, lockTable, storeApplicationName, terminateBackends } from '@apphost/testing';
import { BindingStateWaiter, notifyBindingState } from '../bindings/binding-state-waiter';
import { fixtureSpec, registrySuite } from '../test/registry-harness';
import { REGISTRY_SCHEMA } from './registry-store';
import { RegistryStoreAccess } from './store-access';

// Real PostgreSQL and NATS; each fault resolves in well under a second.
jest.setTimeout(30_000);

const suite = registrySuite();
const schema = `${suite.prefix}${REGISTRY_SCHEMA}`;

describe('binding-registry when PostgreSQL terminates its backends', () => {
  it('a backend terminated inside the put-toolset transaction fails it UNAVAILABLE (retryable); the process serves on and the retry stores it', async () => {
    const spec = fixtureSpec('capability-gated', null);
    // The transaction's first insert runs, its second (into bindings) waits on this lock: terminated mid-transaction.
    const lock = await lockTable(schema, 'bindings');
    let putting: Promise<unknown>;
    try {
      putting = suite.registry.client.request(RegistryPutToolset, { toolsetId: 'cut-put', spec });
      const blocked = await eventually(async () => {
        const waiting = (await backendsOf(storeApplicationName('binding-registry', schema))).filter((b) => b.waitingOnLock);
        return waiting.length > 0 ? waiting : undefined;
      }, 5_000);
      await terminateBackends(blocked.map((b) => b.pid));
      const failure = await expectAppError(putting, 'UNAVAILABLE');
      expect(failure.retryable).toBe(true);
      expect(failure.details).toMatchObject({ phase: 'transaction', pgCode: '57P01' });
    } finally {
      await lock.release();
    }
    await expectAppError(suite.registry.client.request(RegistryGetToolset, { toolsetId: 'cut-put' }), 'NOT_FOUND');
    await expect(suite.registry.client.request(RegistryPutToolset, { toolsetId: 'cut-put', spec })).resolves.toBeDefined();
    await expect(suite.registry.client.request(RegistryGetToolset, { toolsetId: 'cut-put' })).resolves.toMatchObject({ toolsetId: 'cut-put' });
  });

  it('the LISTEN connection of the state waiter is opened again after its backend is terminated, and wakes waiters again', async () => {
    const waiter = suite.registry.running.app.get(BindingStateWaiter);
    const database = suite.registry.running.app.get(RegistryStoreAccess).store.database;
    waiter.recheckMs = 60_000; // a wake-up inside the test came from a notification, not from the re-check
    try {
      const listenName = storeApplicationName('binding-registry', schema, 'listen-apphost_binding_state');
      const pending = await waiter.nextChange('listen-drop', 1, 60_000);
      const [first] = await eventually(async () => {
        const found = await backendsOf(listenName);
        return found.length === 1 ? found : undefined;
      }, 5_000);
      await terminateBackends([first.pid]);
      // Re-LISTENed while a waiter still waits, without another call arming it.
      await eventually(async () => {
        const found = await backendsOf(listenName);
        return found.length === 1 && found[0].pid !== first.pid && found[0].query.startsWith('LISTEN');
      }, 5_000);

      const notifier = database.dedicatedConnection('notify');
      await notifier.connect();
      try {
        const started = Date.now();
        await notifyBindingState(notifier, schema, 'listen-drop', 1);
        await pending.changed;
        expect(Date.now() - started).toBeLessThan(5_000);
      } finally {
        await notifier.end();
      }
    } finally {
      waiter.recheckMs = 1_000;
    }
  });
});
