import { LifecycleCreateSession, LifecycleDeleteSession, LifecycleListSessions } from '@apphost/contracts';
import { describeOnPostgres } from '@apphost/testing';
import { LifecycleHarness } from '../testing/lifecycle-harness';

describeOnPostgres('lifecycle-store list-sessions', (target) => {
  describe('through the bus', () => {
    const h = new LifecycleHarness(target);

    beforeAll(() => h.start(), 60_000);
    afterAll(async () => {
      await h.stop();
      await h.cleanup();
    });

    const owner = (appName: string, userId = 'alice') => ({ tenant: 'acme', appName, userId });
    const create = (appName: string, sessionId: string, userId = 'alice') =>
      h.client.request(LifecycleCreateSession, { session: { ...owner(appName, userId), sessionId }, creationOperationId: `op-${sessionId}` });

    it("lists only the owner's sessions of that app, newest first, without DELETED ones", async () => {
      await create('chooser', 'first');
      await create('chooser', 'second');
      await create('chooser', 'gone');
      await create('chooser', 'bobs', 'bob');
      await create('other-app', 'elsewhere');
      await expect(h.client.request(LifecycleDeleteSession, { session: { ...owner('chooser'), sessionId: 'gone' } })).resolves.toMatchObject({
        state: 'DELETED',
      });

      const { sessions: listed } = await h.client.request(LifecycleListSessions, { owner: owner('chooser') });
      expect(listed.map((s) => s.sessionId)).toEqual(['second', 'first']);
      expect(listed[0]).toMatchObject({ incarnation: 1, state: 'ACTIVE' });
      expect(Date.parse(listed[0].createdAt)).toBeGreaterThanOrEqual(Date.parse(listed[1].createdAt));
    });

    it('bounds the answer by limit and answers an owner with no sessions with an empty list', async () => {
      await create('bounded', 'a');
      await create('bounded', 'b');
      const { sessions } = await h.client.request(LifecycleListSessions, { owner: owner('bounded'), limit: 1 });
      expect(sessions.map((s) => s.sessionId)).toEqual(['b']);
      await expect(h.client.request(LifecycleListSessions, { owner: owner('nobody-here') })).resolves.toEqual({ sessions: [] });
    });
  });
});
