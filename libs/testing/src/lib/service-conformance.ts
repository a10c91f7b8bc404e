import { describeContract } from '@apphost/contracts';
import type { ServiceDefinition } from '@apphost/runtime';
import { TEST_NATS_URL, uniquePrefix } from './environment';
import { startFakeProviders } from './fake-providers';
import { dropSchemasWithPrefix } from './pg-cleanup';
import { spawnTs, waitForExit } from './processes';
import { bootService, type ServiceUnderTest } from './service-harness';

/**
 * What every AppHost service must do before it has any domain: answer `describe` over real NATS with its
 * stores ready, serve probes and metrics, keep its store identity across a restart, and refuse to start
 * on bad configuration. Each app's spec runs this against its own definition.
 */
export function serviceConformance(definition: ServiceDefinition, entry: string, env: Record<string, string> = {}): void {
  describe(`${definition.name} service conformance`, () => {
    const prefix = uniquePrefix();
    let service: ServiceUnderTest | undefined;

    const cleanups: (() => Promise<void> | undefined)[] = [];

    afterEach(async () => {
      await service?.stop();
      service = undefined;
      for (const cleanup of cleanups.splice(0)) await cleanup();
    });

    afterAll(async () => {
      if (definition.requires.includes('postgres')) await dropSchemasWithPrefix(prefix);
    });

    it('answers describe over NATS with its identity and ready stores', async () => {
      service = await bootService(definition, prefix, env);
      const described = await service.client.request(describeContract(definition.name), {});
      expect(described).toMatchObject({ service: definition.name, transport: 'nats', instanceId: service.running.context.config.INSTANCE_ID });
      expect(described.stores).toHaveLength(definition.requires.length);
      for (const store of described.stores) expect(store.ready).toBe(true);
      if (definition.requires.includes('postgres')) expect(described.stores[0].schema?.startsWith(prefix)).toBe(true);
    });

    it('serves /healthz, /readyz and /metrics', async () => {
      // A service that routes to others is ready only while they answer: here, services that only answer describe.
      const routed = definition.routesTo?.length ? await startFakeProviders(env.NATS_URL ?? TEST_NATS_URL, definition.routesTo) : undefined;
      cleanups.push(() => routed?.stop());
      service = await bootService(definition, prefix, env);
      const base = service.running.url!.replace('[::1]', '127.0.0.1');
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ ready: true, bus: true });
      await service.client.request(describeContract(definition.name), {});
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toContain(`apphost_bus_handled_total{subject="apphost.${definition.name}.describe.v1",code="OK",service="${definition.name}"}`);
    });

    it('reports not ready once the bus is gone', async () => {
      service = await bootService(definition, prefix, env);
      const base = service.running.url!.replace('[::1]', '127.0.0.1');
      await service.transport.close();
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ ready: false, bus: false });
    });

    if (definition.requires.includes('postgres')) {
      it('keeps its store identity across a restart', async () => {
        service = await bootService(definition, prefix, env);
        const first = await service.client.request(describeContract(definition.name), {});
        await service.stop();
        service = await bootService(definition, prefix, env);
        const second = await service.client.request(describeContract(definition.name), {});
        expect(second.stores[0].namespace).toBe(first.stores[0].namespace);
        expect(second.stores[0].namespace).toMatch(/[0-9a-f-]{36}/);
        expect(second.instanceId).not.toBe(first.instanceId);
      });
    }

    it('refuses to start on bad configuration, naming the problem', async () => {
      const child = spawnTs(entry, { ...env, HTTP_PORT: 'not-a-port' });
      const result = await waitForExit(child, 30_000);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`invalid configuration for ${definition.name}`);
      expect(result.stderr).toContain('HTTP_PORT');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    });
  });
}
