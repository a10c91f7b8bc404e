import { RedisCoordinationStore, type CoordinationStore } from '@apphost/coordination';
import type { HostProfile } from '@apphost/contracts';
import { captureServiceLogs, TEST_REDIS_URL, testLogger, uniquePrefix } from '@apphost/testing';
import { testProfile } from '../test/fake-plane';
import { liveViewRecord, viewContextOf } from '../test/view-context';
import { SessionLocks } from '../views/session-locks';
import type { ViewCollaborators, ViewGeneration } from '../views/view-collaborators';
import { ViewRecords, type StoredView } from '../views/view-records';
import { ViewTeardown } from '../views/view-teardown';
import { RpcMessageAdmission } from './rpc-admission';
import { ViewNotifications } from './view-notifications';

const PINO_LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;
const accept: Partial<HostProfile> = { callbackPolicy: { ...testProfile().callbackPolicy, requestTeardown: 'accept' } };
const hostPage: Partial<HostProfile> = { callbackPolicy: { ...testProfile().callbackPolicy, requestTeardown: 'host-page' } };

/** View notifications against View records in the real Redis; the generation's owner is a stand-in that records releases. */
describe('ViewNotifications (real Redis View records)', () => {
  const keyPrefix = `apphost:${uniquePrefix()}governed-operations:`;
  let logs: ReturnType<typeof captureServiceLogs>;
  let stores: CoordinationStore[];
  let records: ViewRecords;
  let now = Date.UTC(2030, 0, 1);
  /** The references given back to the generation's owner (phase 2 of a teardown). */
  const released: { generationId: string; leaseId: string }[] = [];
  const owner = {
    release: async (g: ViewGeneration, leaseId: string) => void released.push({ generationId: g.generationId, leaseId }),
  } as unknown as ViewCollaborators;

  /** One replica's notifications on its own store connection (every replica sees the same records). */
  function replica(store: CoordinationStore) {
    const logger = testLogger('view-notifications');
    const viewRecords = new ViewRecords(store, 60_000);
    return new ViewNotifications(viewRecords, new ViewTeardown(viewRecords, owner, new SessionLocks(store), logger), logger, () => now);
  }
  let notifications: ViewNotifications;

  beforeAll(async () => {
    logs = captureServiceLogs('debug');
    stores = await Promise.all([1, 2].map((n) => RedisCoordinationStore.connect({ url: TEST_REDIS_URL, keyPrefix, name: `notifications-${n}` })));
    records = new ViewRecords(stores[0], 60_000);
    notifications = replica(stores[0]);
  });
  afterAll(async () => {
    logs.stop();
    await Promise.all(stores.map((s) => s.close()));
  });
  beforeEach(() => {
    logs.lines.length = 0;
    released.length = 0;
    now += 10 * 60_000;
  });

  const opened = () => records.create(liveViewRecord());
  const linesOf = (viewId: string, msg?: string) => logs.lines.filter((l) => l['viewId'] === viewId && (msg === undefined || l['msg'] === msg));
  const stored = async (view: StoredView) => (await records.find(view.record.viewId))?.record;

  describe('request-teardown', () => {
    it('under host-page: records the request once and leaves the decision to the host page', async () => {
      const view = await opened();
      await notifications.handle(viewContextOf(view, hostPage), 'ui/notifications/request-teardown', {});
      const after = await stored(view);
      expect(after).toMatchObject({ state: 'ACTIVE', reason: null, released: false, teardownRequestedAt: new Date(now).toISOString() });
      expect(released).toEqual([]);
      expect(linesOf(view.record.viewId, 'view requested teardown')).toMatchObject([{ decision: 'host-page', level: PINO_LEVEL.info }]);

      // A second one (on the stale context, and on a fresh read) changes nothing.
      now += 5_000;
      await notifications.handle(viewContextOf(view, hostPage), 'ui/notifications/request-teardown', {});
      const fresh = await records.find(view.record.viewId);
      await notifications.handle(viewContextOf(fresh as StoredView, hostPage), 'ui/notifications/request-teardown', {});
      expect(await stored(view)).toEqual(after);
      expect(linesOf(view.record.viewId, 'duplicate request-teardown ignored')).toHaveLength(2);
    });

    it('under the default policy (absent): host-page', async () => {
      const view = await opened();
      await notifications.handle(viewContextOf(view), 'ui/notifications/request-teardown', {});
      expect(await stored(view)).toMatchObject({ state: 'ACTIVE', teardownRequestedAt: new Date(now).toISOString() });
    });

    it('under accept: records it and tears the View down (both phases); a duplicate is ignored', async () => {
      const view = await opened();
      await notifications.handle(viewContextOf(view, accept), 'ui/notifications/request-teardown', {});
      expect(await stored(view)).toMatchObject({ state: 'CLOSED', reason: 'TORN_DOWN', released: true, teardownRequestedAt: new Date(now).toISOString() });
      expect(released).toEqual([{ generationId: view.record.generation?.generationId, leaseId: view.record.leaseId }]);

      await notifications.handle(viewContextOf(view, accept), 'ui/notifications/request-teardown', {});
      expect(linesOf(view.record.viewId, 'request-teardown of a View no longer live: ignored')).toHaveLength(1);
      expect(released).toHaveLength(1);
    });

    it('reads again when another change won the race, keeping that change', async () => {
      const view = await opened();
      const renewed = await records.update(view, { ...view.record, expiresAt: new Date(Date.now() + 120_000).toISOString() });
      await notifications.handle(viewContextOf(view, hostPage), 'ui/notifications/request-teardown', {}); // `view` is stale now
      expect(await stored(view)).toEqual({ ...renewed?.record, teardownRequestedAt: new Date(now).toISOString() });
    });

    it('records one request when two replicas receive it at once; under accept the View ends once', async () => {
      const [a, b] = [replica(stores[0]), replica(stores[1])];
      const host = await opened();
      await Promise.all([a, b].map((r) => r.handle(viewContextOf(host, hostPage), 'ui/notifications/request-teardown', {})));
      expect(linesOf(host.record.viewId, 'view requested teardown')).toHaveLength(1);
      expect(linesOf(host.record.viewId, 'duplicate request-teardown ignored')).toHaveLength(1);

      const ended = await opened();
      await Promise.all([a, b].map((r) => r.handle(viewContextOf(ended, accept), 'ui/notifications/request-teardown', {})));
      expect(await stored(ended)).toMatchObject({ state: 'CLOSED', reason: 'TORN_DOWN', released: true });
      expect(linesOf(ended.record.viewId, 'view requested teardown')).toHaveLength(1);
      expect(linesOf(ended.record.viewId, 'view ended')).toHaveLength(1);
      expect(released).toHaveLength(1);
    });

    it('ignores one for a View that ended or is gone', async () => {
      const view = await opened();
      const revoked = await records.update(view, { ...view.record, state: 'REVOKED', reason: 'TOOLSET_REVOKED' });
      await notifications.handle(viewContextOf(view, accept), 'ui/notifications/request-teardown', {});
      expect(await stored(view)).toEqual(revoked?.record);
      expect(released).toEqual([]);

      const gone = await opened();
      await records.delete(gone);
      await notifications.handle(viewContextOf(gone, accept), 'ui/notifications/request-teardown', {});
      expect(await records.find(gone.record.viewId)).toBeNull();
      expect(linesOf(gone.record.viewId, 'request-teardown of a View no longer live: ignored')).toHaveLength(1);
    });

    it('never tears down on a malformed one: admission reports it as a notification, and the handler ignores it too', async () => {
      const view = await opened();
      const message = { jsonrpc: '2.0', method: 'ui/notifications/request-teardown', params: 'now' };
      const policy = viewContextOf(view, accept).policy;
      expect(() => new RpcMessageAdmission().parse(message, 80, policy)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', details: expect.objectContaining({ reason: 'RPC_INVALID_PARAMS', notification: true }) }),
      );
      await notifications.handle(viewContextOf(view, accept), 'ui/notifications/request-teardown', 'now' as unknown as Record<string, unknown>);
      expect(await stored(view)).toEqual(view.record);
      expect(released).toEqual([]);
      expect(linesOf(view.record.viewId, 'malformed view notification ignored')).toMatchObject([
        { method: 'ui/notifications/request-teardown', level: PINO_LEVEL.warn },
      ]);
    });
  });

  describe('lifecycle notifications', () => {
    it('log initialized and size-changed at debug and record nothing', async () => {
      const view = await opened();
      await notifications.handle(viewContextOf(view), 'ui/notifications/initialized', {});
      await notifications.handle(viewContextOf(view), 'ui/notifications/size-changed', { width: 640, height: 480 });
      expect(linesOf(view.record.viewId)).toMatchObject([
        { msg: 'view initialized', level: PINO_LEVEL.debug },
        { msg: 'view size changed', level: PINO_LEVEL.debug, width: 640, height: 480 },
      ]);
      expect(await stored(view)).toEqual(view.record);
    });

    it('bound what a View repeating request-teardown adds to the log', async () => {
      const view = await opened();
      for (let i = 0; i < 50; i++) await notifications.handle(viewContextOf(view, hostPage), 'ui/notifications/request-teardown', {});
      expect(linesOf(view.record.viewId, 'view requested teardown')).toHaveLength(1);
      expect(linesOf(view.record.viewId, 'duplicate request-teardown ignored')).toHaveLength(30);
    });

    it('ignores a malformed size-changed with a log line', async () => {
      const view = await opened();
      await notifications.handle(viewContextOf(view), 'ui/notifications/size-changed', { width: 'wide' });
      expect(linesOf(view.record.viewId)).toMatchObject([{ msg: 'malformed view notification ignored', issues: [{ path: 'params.width' }] }]);
    });

    it('bound what a View that resizes in a loop adds to the log', async () => {
      const view = await opened();
      for (let i = 0; i < 100; i++) await notifications.handle(viewContextOf(view), 'ui/notifications/size-changed', { width: i, height: i });
      expect(linesOf(view.record.viewId, 'view size changed')).toHaveLength(30);
      expect(linesOf(view.record.viewId, 'view notifications of a View over its budget: dropping its lines for the rest of the minute')).toHaveLength(1);
    });
  });

  describe('notifications/message', () => {
    it('writes one app audit log line per message, levels mapped', async () => {
      const view = await opened();
      const levels = {
        debug: 'debug',
        info: 'info',
        notice: 'info',
        warning: 'warn',
        error: 'error',
        critical: 'error',
        alert: 'error',
        emergency: 'error',
      } as const;
      for (const level of Object.keys(levels))
        await notifications.handle(viewContextOf(view), 'notifications/message', { level, logger: 'monitor', data: { level } });
      const lines = linesOf(view.record.viewId, 'app log');
      expect(lines.map((l) => [l['appLevel'], l['level']])).toEqual(Object.entries(levels).map(([mcp, pino]) => [mcp, PINO_LEVEL[pino]]));
      expect(lines[0]).toMatchObject({
        audience: 'app_audit',
        viewId: view.record.viewId,
        widgetId: view.record.widget.widgetId,
        session: view.record.session.sessionId,
        appLogger: 'monitor',
        data: '{"level":"debug"}',
      });
      expect(lines[0]).not.toHaveProperty('truncated');
      expect(await stored(view)).toEqual(view.record);
    });

    it('cuts large data and a long logger name to a bound', async () => {
      const view = await opened();
      await notifications.handle(viewContextOf(view), 'notifications/message', {
        level: 'info',
        logger: 'l'.repeat(1000),
        data: { blob: 'x'.repeat(100_000) },
      });
      const [line] = linesOf(view.record.viewId, 'app log');
      expect((line['data'] as string).length).toBe(2048);
      expect((line['appLogger'] as string).length).toBe(128);
      expect(line).toMatchObject({ truncated: true, dataChars: JSON.stringify({ blob: 'x'.repeat(100_000) }).length });
    });

    it('drops the lines of a chatty View past its budget, counts them, and starts afresh the next minute', async () => {
      const chatty = await opened();
      const quiet = await opened();
      for (let i = 0; i < 200; i++) await notifications.handle(viewContextOf(chatty), 'notifications/message', { level: 'info', data: i });
      await notifications.handle(viewContextOf(quiet), 'notifications/message', { level: 'info', data: 'still heard' });
      expect(linesOf(chatty.record.viewId, 'app log')).toHaveLength(60);
      expect(linesOf(chatty.record.viewId, 'app log of a View over its budget: dropping its lines for the rest of the minute')).toMatchObject([{ limit: 60 }]);
      expect(linesOf(quiet.record.viewId, 'app log')).toHaveLength(1);

      now += 60_000;
      await notifications.handle(viewContextOf(chatty), 'notifications/message', { level: 'info', data: 'next minute' });
      expect(linesOf(chatty.record.viewId, 'app log lines of a View dropped')).toMatchObject([{ dropped: 140, limit: 60 }]);
      expect(linesOf(chatty.record.viewId, 'app log').at(-1)).toMatchObject({ data: '"next minute"' });
    });
  });
});
