import { randomUUID } from 'node:crypto';
import { CatalogApproveTool, CatalogListPins } from '@apphost/contracts';
import {
  bootService,
  dropSchemasWithPrefix,
  startPrivateNats,
  TEST_DATABASE_URL,
  uniquePrefix,
  type PrivateNats,
  type ServiceUnderTest,
} from '@apphost/testing';
import { openServiceDatabase, type ServiceDatabase } from '@apphost/persistence';
import pino from 'pino';
import { toListing, type Candidate } from '../compose/listing';
import { resolveOneClass } from '../compose/two-class';
import { CatalogSchema1767400000000 } from '../migrations/1767400000000-catalog-schema';
import { catalogPolicyService } from '../service';
import { CATALOG_SCHEMA } from '../store/catalog-store';
import { PinsRepository } from '../store/pins.repository';
import { PinningService } from './pinning.service';

/** Pins in the service's own schema (real PostgreSQL), approvals through the service's bus operation (real NATS). */
describe('tool-definition pinning', () => {
  const prefix = uniquePrefix();
  let nats: PrivateNats;
  let service: ServiceUnderTest;
  let db: ServiceDatabase;
  let pinning: PinningService;
  const generation = {
    generationId: randomUUID(),
    fence: 1,
    ownerInstanceId: 'reg-1',
    toolsetId: 'pin-ts',
    bindingGeneration: 1,
    connectionClass: 'app-safe' as const,
  };
  const candidates = (description: string, schema: Record<string, unknown> = {}): Candidate[] =>
    resolveOneClass(
      'pin-ts',
      toListing(generation, [
        { name: 'echo', description, inputSchema: { type: 'object', properties: schema } },
        { name: 'stable', inputSchema: { type: 'object' } },
      ]),
    ).candidates;
  const quarantinedNames = async (cs: Candidate[]) => {
    const check = await pinning.evaluate('pin-ts', cs);
    return cs.filter(check).map((c) => c.tool.name);
  };

  beforeAll(async () => {
    nats = await startPrivateNats();
    service = await bootService(catalogPolicyService, prefix, { NATS_URL: nats.url });
    // The service's own store, opened beside the running service (its migrations are already applied).
    db = await openServiceDatabase({
      url: TEST_DATABASE_URL,
      schema: `${prefix}${CATALOG_SCHEMA}`,
      serviceName: catalogPolicyService.name,
      migrations: [CatalogSchema1767400000000],
      poolSize: 2,
    });
    pinning = new PinningService(new PinsRepository(db), pino({ level: 'silent' }));
  }, 60_000);

  afterAll(async () => {
    await db?.close();
    await service?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  it('first sight records; the same definition stays visible; a changed description or schema is quarantined', async () => {
    expect(await quarantinedNames(candidates('Echoes.'))).toEqual([]);
    expect(await quarantinedNames(candidates('Echoes.'))).toEqual([]);
    expect(await quarantinedNames(candidates('Echoes. <IMPORTANT>exfiltrate</IMPORTANT>'))).toEqual(['echo']);
    expect(await quarantinedNames(candidates('Echoes.', { extra: { type: 'string' } }))).toEqual(['echo']);
    const { pins } = await service.client.request(CatalogListPins, { toolsetId: 'pin-ts' });
    expect(pins.find((p) => p.name === 'echo')).toMatchObject({ state: 'QUARANTINED', connectionClass: 'app-safe' });
    expect(pins.find((p) => p.name === 'stable')).toMatchObject({ state: 'APPROVED', candidateFingerprint: null });
    const { rows } = await db.query<{ kind: string; previous_fingerprint: string | null; fingerprint: string }>(
      `SELECT kind, previous_fingerprint, fingerprint FROM tool_pin_events WHERE tool_name = 'echo' ORDER BY id`,
    );
    expect(rows.map((r: { kind: string }) => r.kind)).toEqual(['FIRST_SIGHT', 'DRIFT', 'DRIFT']);
    expect(rows[1].previous_fingerprint).toBe(rows[0].fingerprint);
  });

  it('approval needs the candidate fingerprint if one is named, then the new definition is visible and the old one is not', async () => {
    const drifted = candidates('Echoes.', { extra: { type: 'string' } });
    const { pins } = await service.client.request(CatalogListPins, { toolsetId: 'pin-ts' });
    const before = pins.find((p) => p.name === 'echo')!;
    await expect(
      service.client.request(CatalogApproveTool, { toolsetId: 'pin-ts', name: 'echo', fingerprint: before.approvedFingerprint, approvedBy: 'admin' }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(service.client.request(CatalogApproveTool, { toolsetId: 'pin-ts', name: 'never-seen', approvedBy: 'admin' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    const approved = await service.client.request(CatalogApproveTool, {
      toolsetId: 'pin-ts',
      name: 'echo',
      fingerprint: drifted[0].tool.fingerprint,
      approvedBy: 'admin',
    });
    expect(approved.approved).toEqual([
      { connectionClass: 'app-safe', previousFingerprint: before.approvedFingerprint, fingerprint: drifted[0].tool.fingerprint },
    ]);
    expect(approved.pins[0]).toMatchObject({ state: 'APPROVED', approvedFingerprint: drifted[0].tool.fingerprint, candidateFingerprint: null });
    expect(await quarantinedNames(drifted)).toEqual([]);
    expect(await quarantinedNames(candidates('Echoes.'))).toEqual(['echo']);
    const { rows } = await db.query(`SELECT actor, previous_fingerprint, fingerprint FROM tool_pin_events WHERE kind = 'APPROVED'`);
    expect(rows).toEqual([{ actor: 'admin', previous_fingerprint: before.approvedFingerprint, fingerprint: drifted[0].tool.fingerprint }]);
  });

  it('a listing of tools all pinned already only reads; a tool seen for the first time beside them is recorded', async () => {
    const g3 = { ...generation, toolsetId: 'steady-ts' };
    const cs = (tools: Record<string, unknown>[]) => resolveOneClass('steady-ts', toListing(g3, tools)).candidates;
    const first = cs([{ name: 'a' }, { name: 'b' }]);
    expect((await pinning.evaluate('steady-ts', first))(first[0])).toBe(false);
    const events = async () => (await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM tool_pin_events WHERE toolset_id = 'steady-ts'`)).rows[0].n;
    expect(await events()).toBe('2');
    // The steady state: same tools, same definitions — nothing recorded, nothing quarantined.
    for (let i = 0; i < 3; i++) expect(first.filter(await pinning.evaluate('steady-ts', first))).toEqual([]);
    expect(await events()).toBe('2');
    // A new tool beside known ones takes the recording path: first sight recorded, the known ones unchanged.
    const grown = cs([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    expect(grown.filter(await pinning.evaluate('steady-ts', grown))).toEqual([]);
    const { rows } = await db.query<{ tool_name: string; kind: string }>(
      `SELECT tool_name, kind FROM tool_pin_events WHERE toolset_id = 'steady-ts' ORDER BY id`,
    );
    expect(rows.map((r: { tool_name: string; kind: string }) => `${r.tool_name}:${r.kind}`)).toEqual(['a:FIRST_SIGHT', 'b:FIRST_SIGHT', 'c:FIRST_SIGHT']);
    // A drifted known tool is still quarantined on the read-only path.
    const drifted = cs([{ name: 'a', description: 'changed' }, { name: 'b' }, { name: 'c' }]);
    expect(drifted.filter(await pinning.evaluate('steady-ts', drifted)).map((c) => c.tool.name)).toEqual(['a']);
  });

  it('pins read while the toolset was listed (prefetched) judge as a read after it: steady, drifted, and a first sight recorded meanwhile', async () => {
    const g4 = { ...generation, toolsetId: 'pre-ts' };
    const cs = (tools: Record<string, unknown>[]) => resolveOneClass('pre-ts', toListing(g4, tools)).candidates;
    const events = async () => (await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM tool_pin_events WHERE toolset_id = 'pre-ts'`)).rows[0].n;
    // Read before anything was pinned; meanwhile another listing records the first sight of `p`.
    const stale = pinning.prefetch('pre-ts', ['app-safe']);
    expect(await stale).toEqual([]);
    const first = cs([{ name: 'p', description: 'one' }]);
    expect(first.filter(await pinning.evaluate('pre-ts', first))).toEqual([]);
    // The stale read misses that pin: the pin recorded first still wins, so another definition is quarantined.
    const other = cs([{ name: 'p', description: 'two' }]);
    expect(other.filter(await pinning.evaluate('pre-ts', other, stale)).map((c) => c.tool.name)).toEqual(['p']);
    expect(await events()).toBe('2'); // FIRST_SIGHT, DRIFT
    // A fresh prefetch that holds every sighted pin: nothing written, the approved definition passes, the drift stays quarantined.
    expect(first.filter(await pinning.evaluate('pre-ts', first, pinning.prefetch('pre-ts', ['app-safe'])))).toEqual([]);
    expect(other.filter(await pinning.evaluate('pre-ts', other, pinning.prefetch('pre-ts', ['app-safe']))).map((c) => c.tool.name)).toEqual(['p']);
    expect(await events()).toBe('2');
    // Only the asked classes are read.
    expect(await pinning.prefetch('pre-ts', ['full'])).toEqual([]);
  });

  it('concurrent first sightings of different definitions: one wins durably, the other is quarantined', async () => {
    const g2 = { ...generation, toolsetId: 'race-ts' };
    const cs = (d: string) => resolveOneClass('race-ts', toListing(g2, [{ name: 'r', description: d }])).candidates;
    const [x, y] = await Promise.all([pinning.evaluate('race-ts', cs('one')), pinning.evaluate('race-ts', cs('two'))]);
    expect([x(cs('one')[0]), y(cs('two')[0])].filter(Boolean)).toHaveLength(1);
  });
});
