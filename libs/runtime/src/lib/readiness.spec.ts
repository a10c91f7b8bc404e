import { BusClient, BusServer, InProcessTransport } from '@apphost/bus';
import { describeContract, type DescribeResponse } from '@apphost/contracts';
import type { StoreReport } from '@apphost/contracts';
import { parseCommonConfig } from './config';
import { ReadinessService } from './readiness';
import { RoutedServicesProbe } from './routed-services';
import { ServiceMetrics } from './metrics';
import { storeOf, type ServiceContext, type StoreHandle } from './service-definition';
import pino from 'pino';

function store(report: () => Promise<StoreReport>): StoreHandle {
  return { report, close: async () => undefined };
}

function contextWith(transport: InProcessTransport): ServiceContext {
  return {
    service: 'sealed-result-store',
    config: parseCommonConfig('sealed-result-store', {}),
    transport,
    logger: pino({ level: 'silent' }),
    metrics: new ServiceMetrics('sealed-result-store', { processMetrics: false }),
  };
}

describe('ReadinessService', () => {
  it('is ready when the bus is connected and every store answers ready', async () => {
    const readiness = new ReadinessService(contextWith(new InProcessTransport()), [store(async () => ({ kind: 'postgres', name: 'db', ready: true }))]);
    await expect(readiness.check()).resolves.toMatchObject({ ready: true, bus: true });
  });

  it('is not ready when a store reports not ready, or fails to report at all', async () => {
    const notReady = new ReadinessService(contextWith(new InProcessTransport()), [store(async () => ({ kind: 'redis', name: 'r', ready: false }))]);
    await expect(notReady.check()).resolves.toMatchObject({ ready: false, bus: true });
    const failing = new ReadinessService(contextWith(new InProcessTransport()), [store(() => Promise.reject(new Error('connection reset')))]);
    const result = await failing.check();
    expect(result.ready).toBe(false);
    expect(result.stores[0].ready).toBe(false);
  });

  it('is not ready when the bus is closed', async () => {
    const transport = new InProcessTransport();
    await transport.close();
    await expect(new ReadinessService(contextWith(transport), []).check()).resolves.toMatchObject({ ready: false, bus: false });
  });
});

describe('ReadinessService with routed services', () => {
  it('is not ready while a routed service does not answer, and asks again only after the cache window', async () => {
    const transport = new InProcessTransport();
    const server = new BusServer({ transport, instanceId: 'i1', queueGroup: 'lifecycle-store', logger: { error: () => undefined, warn: () => undefined } });
    let described = 0;
    server.register(describeContract('lifecycle-store'), (): DescribeResponse => {
      described++;
      return { service: 'lifecycle-store', version: 't', instanceId: 'i1', transport: 'in-process', startedAt: new Date(0).toISOString(), stores: [] };
    });
    server.start();
    let now = 0;
    const probe = new RoutedServicesProbe(new BusClient({ transport, defaultTimeoutMs: 1000 }), ['lifecycle-store', 'export-audit'], {
      timeoutMs: 200,
      cacheMs: 1000,
      now: () => now,
    });
    const readiness = new ReadinessService(contextWith(transport), [], probe);
    const first = await readiness.check();
    expect(first).toMatchObject({ ready: false, bus: true });
    expect(first.services).toEqual([
      { service: 'lifecycle-store', ready: true },
      { service: 'export-audit', ready: false, error: { code: 'UNAVAILABLE', message: 'export-audit is unavailable; the request was not executed' } },
    ]);
    now = 999;
    await readiness.check();
    expect(described).toBe(1);
    now = 1000;
    await readiness.check();
    expect(described).toBe(2);
    await server.stop(100);
  });
});

describe('ServiceMetrics', () => {
  it('exposes bus outcomes by subject and code in the Prometheus format', async () => {
    const metrics = new ServiceMetrics('gateway', { processMetrics: false });
    metrics.bus.observeHandled('apphost.gateway.describe.v1', 'OK', 0.002);
    metrics.bus.observeRequested('apphost.lifecycle-store.describe.v1', 'UNAVAILABLE', 0.001);
    metrics.bus.observeTransfer?.('apphost.binding-registry.read-resource.v1', 'served', 'OK', 4_300_000);
    metrics.observeHttp('GET', '/healthz', 200, 0.001);
    const text = await metrics.registry.metrics();
    expect(text).toContain('apphost_bus_handled_total{subject="apphost.gateway.describe.v1",code="OK",service="gateway"} 1');
    expect(text).toContain('apphost_bus_requested_total{subject="apphost.lifecycle-store.describe.v1",code="UNAVAILABLE",service="gateway"} 1');
    expect(text).toContain('apphost_http_requests_total{method="GET",route="/healthz",status="200",service="gateway"} 1');
    expect(text).toContain('apphost_bus_transfers_total{subject="apphost.binding-registry.read-resource.v1",side="served",code="OK",service="gateway"} 1');
    expect(text).toContain('apphost_bus_transfer_bytes_total{subject="apphost.binding-registry.read-resource.v1",side="served",service="gateway"} 4300000');
  });
});

describe('storeOf', () => {
  class FirstStore {
    async report(): Promise<StoreReport> {
      return { kind: 'memory', name: 'first', ready: true };
    }
    async close(): Promise<void> {
      return undefined;
    }
  }
  class OtherStore extends FirstStore {}

  it('finds the store of a class among those opened, and names the service when it is missing', () => {
    const first = new FirstStore();
    expect(storeOf([first], FirstStore, 'catalog-policy')).toBe(first);
    expect(() => storeOf([first], OtherStore, 'catalog-policy')).toThrow('catalog-policy: its OtherStore is not open');
  });
});
