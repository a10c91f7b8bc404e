import { randomBytes } from 'node:crypto';
import {
  LifecycleCreateSession,
  LifecycleDeleteSession,
  LifecycleGetPrincipalRevocation,
  LifecycleGetSession,
  LifecycleGetSessionStanding,
  LifecycleSetPrincipalRevocation,
} from '@apphost/contracts';
import { describeOnPostgres } from '@apphost/testing';
import { LifecycleHarness } from '../testing/lifecycle-harness';

jest.setTimeout(30_000);

describeOnPostgres('lifecycle-store principal revocation', (target) => {
  // Nested, so these hooks run inside the target's own (its server outlives the cleanup).
  describe('through the bus', () => {
    const h = new LifecycleHarness(target);

    beforeAll(() => h.start(), 60_000);
    afterAll(async () => {
      await h.stop();
      await h.cleanup();
    });

    const principal = (tenant = 'acme') => ({ tenant, subject: `user-${randomBytes(6).toString('hex')}@example.test` });
    const set = (p: { tenant: string; subject: string }, revoked: boolean) => h.client.request(LifecycleSetPrincipalRevocation, { principal: p, revoked });
    const get = (p: { tenant: string; subject: string }) => h.client.request(LifecycleGetPrincipalRevocation, { principal: p });

    it('revoke → revoked since then; revoke again → unchanged, same since; restore → not revoked; restore again → unchanged', async () => {
      const alice = principal();
      await expect(get(alice)).resolves.toEqual({ revoked: false, since: null });

      const before = Date.now();
      const revoked = await set(alice, true);
      expect(revoked).toEqual({ revoked: true, changed: true, since: expect.any(String) });
      // The database's clock stamps it; allow for skew against this process's clock.
      expect(Math.abs(Date.parse(String(revoked.since)) - before)).toBeLessThan(60_000);
      await expect(get(alice)).resolves.toEqual({ revoked: true, since: revoked.since });

      await expect(set(alice, true)).resolves.toEqual({ revoked: true, changed: false, since: revoked.since });
      await expect(get(alice)).resolves.toEqual({ revoked: true, since: revoked.since });

      await expect(set(alice, false)).resolves.toEqual({ revoked: false, changed: true, since: null });
      await expect(get(alice)).resolves.toEqual({ revoked: false, since: null });
      await expect(set(alice, false)).resolves.toEqual({ revoked: false, changed: false, since: null });
    });

    it('survives a restart of the service (durable)', async () => {
      const bob = principal();
      const { since } = await set(bob, true);
      await h.restart();
      await expect(get(bob)).resolves.toEqual({ revoked: true, since });
    });

    it("another tenant's principal with the same subject, and another subject of the same tenant, are unaffected", async () => {
      const carol = principal('acme');
      const sameSubjectElsewhere = { tenant: 'globex', subject: carol.subject };
      const neighbour = principal('acme');
      await set(carol, true);
      await expect(get(sameSubjectElsewhere)).resolves.toEqual({ revoked: false, since: null });
      await expect(get(neighbour)).resolves.toEqual({ revoked: false, since: null });
      await expect(set(sameSubjectElsewhere, false)).resolves.toMatchObject({ changed: false });
      await expect(get(carol)).resolves.toMatchObject({ revoked: true });
    });

    it('concurrent revocations of one principal change it exactly once', async () => {
      const dave = principal();
      const answers = await Promise.all(Array.from({ length: 8 }, () => set(dave, true)));
      expect(answers.filter((a) => a.changed)).toHaveLength(1);
      expect(new Set(answers.map((a) => a.since)).size).toBe(1);
      expect(answers.every((a) => a.revoked)).toBe(true);
    });

    it('stores only a digest of the subject: the raw subject is nowhere in the table', async () => {
      const erin = principal();
      await set(erin, true);
      const rows = await h.sql<{ tenant: string; subject_digest: string; whole: string }>(
        `SELECT tenant, subject_digest, row_to_json(r)::text AS whole FROM principal_revocations r`,
      );
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row.whole).not.toContain(erin.subject);
        expect(row.whole).not.toContain(erin.subject.split('@')[0]);
        expect(row.subject_digest).toMatch(/^[0-9a-f]{64}$/);
      }
      expect(rows.filter((r) => r.tenant === erin.tenant)).not.toHaveLength(0);
    });

    it('get-session-standing answers both questions as the two single requests do, read now (no session: null)', async () => {
      const frank = principal();
      const key = { tenant: frank.tenant, appName: 'standing', userId: 'u1', sessionId: `s-${randomBytes(6).toString('hex')}` };
      const standing = () => h.client.request(LifecycleGetSessionStanding, { principal: frank, session: key });
      await expect(standing()).resolves.toEqual({ revoked: false, session: null });

      await h.client.request(LifecycleCreateSession, { session: key, creationOperationId: `op-${key.sessionId}` });
      const created = await standing();
      expect(created).toEqual({ revoked: false, session: await h.client.request(LifecycleGetSession, { session: key }) });
      expect(created.session).toMatchObject({ state: 'ACTIVE', incarnation: 1 });

      await set(frank, true);
      await expect(standing()).resolves.toMatchObject({ revoked: true, session: { state: 'ACTIVE' } });
      await h.client.request(LifecycleDeleteSession, { session: key });
      const deleted = await standing();
      expect(deleted.revoked).toBe(true);
      expect(deleted.session?.state ?? 'ABSENT').not.toBe('ACTIVE');
      await set(frank, false);
      await expect(standing()).resolves.toMatchObject({ revoked: false });
    });

    it('rejects a malformed principal before any effect (contract validation)', async () => {
      const before = await h.sql<{ n: number }>(`SELECT count(*)::int AS n FROM principal_revocations`);
      await expect(h.client.request(LifecycleSetPrincipalRevocation, { principal: { tenant: 'acme', subject: '' }, revoked: true })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(
        h.client.request(LifecycleSetPrincipalRevocation, { principal: { tenant: 'acme', subject: 'x', scopes: ['admin'] } as never, revoked: true }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(h.sql<{ n: number }>(`SELECT count(*)::int AS n FROM principal_revocations`)).resolves.toEqual(before);
    });
  });
});
