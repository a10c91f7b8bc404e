import {
  ConnPing,
  RegistryAcquireGeneration,
  RegistryPurge,
  RegistryPutProfile,
  RegistryPutToolset,
  RegistryRevoke,
  type GenerationHandle,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import { dropSchemasWithPrefix, eventually, expectAppError, type PrivateNats, startFakeProviders, startPrivateNats, uniquePrefix } from '@apphost/testing';
import { alice, bootRegistry, fixtureSpec, profile, PROVIDER_FAKES, type RegistryUnderTest, session } from '../test/registry-harness';
import { childProcessCount, running, serverPid } from '../test/server-processes';

// Real registries, real stdio servers: every test here finishes in seconds.
jest.setTimeout(30_000);

const prefix = uniquePrefix();
const TOOLSETS = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8'];
let nats: PrivateNats;
let a: RegistryUnderTest;
let b: RegistryUnderTest;
let providers: { stop(): Promise<void> };

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
  a = await bootRegistry(nats.url, prefix, { INSTANCE_ID: 'cascade-a' });
  b = await bootRegistry(nats.url, prefix, { INSTANCE_ID: 'cascade-b' });
  await a.client.request(RegistryPutProfile, { profileId: 'with-callbacks', profile: profile() });
  const quiet = { ...profile(), callbackPolicy: { sampling: 'deny', elicitation: 'deny', roots: 'deny' } as const };
  await a.client.request(RegistryPutProfile, { profileId: 'no-callbacks', profile: quiet });
  for (const id of TOOLSETS) await a.client.request(RegistryPutToolset, { toolsetId: id, spec: fixtureSpec('stateful-nonce', 'with-callbacks') });
  await a.client.request(RegistryPutToolset, { toolsetId: 'quiet', spec: fixtureSpec('stateful-nonce', 'no-callbacks') });
}, 60_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

const acquire = (toolsetId: string, sessionId: string, connectionClass: 'app-safe' | 'full' = 'app-safe'): Promise<GenerationHandle> =>
  a.client.request(RegistryAcquireGeneration, {
    toolsetId,
    connectionClass,
    principal: alice,
    session: session(sessionId),
    holder: { kind: 'view', id: `v-${Math.random()}` },
  });

describe('binding-registry as a deletion-cascade participant', () => {
  it("revoke ends the session's generations on every owner at once; other sessions' servers live on; a repeat is a no-op", async () => {
    // Acquire lands on either replica: take toolsets until both instances own a generation of the doomed session.
    const doomed: GenerationHandle[] = [];
    for (const id of TOOLSETS) {
      doomed.push(await acquire(id, 'doomed'));
      if (new Set(doomed.map((h) => h.ownerInstanceId)).size === 2) break;
    }
    expect(new Set(doomed.map((h) => h.ownerInstanceId))).toEqual(new Set(['cascade-a', 'cascade-b']));
    const idle = await acquire(TOOLSETS[0], 'bystander');
    const doomedPids = await Promise.all(doomed.map((h) => serverPid(a, h)));
    const idlePid = await serverPid(a, idle);
    expect(doomedPids.every(running)).toBe(true);

    const deleted = { session: session('doomed').key, incarnation: 1 };
    expect(await a.client.request(RegistryRevoke, deleted)).toEqual({ ended: doomed.length });
    // The owners closed the connections before answering; the processes are reaped within a bound.
    await eventually(async () => doomedPids.every((pid) => !running(pid)), 5000);
    for (const h of doomed) {
      const gone = await expectAppError(requestOnGeneration(a.client, ConnPing, h, {}));
      expect(gone).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'CONNECTION_GENERATION_GONE', why: 'SESSION_DELETED' } });
    }
    expect(running(idlePid)).toBe(true);
    expect(await serverPid(a, idle)).toBe(idlePid);

    expect(await a.client.request(RegistryRevoke, deleted)).toEqual({ ended: 0 });
    expect(await b.client.request(RegistryPurge, deleted)).toEqual({ ended: 0 });
  });

  it('purge ends a generation acquired for the deleted incarnation after revoke; an older incarnation goes with a newer deletion', async () => {
    const late = await acquire(TOOLSETS[1], 'late');
    const pid = await serverPid(a, late);
    expect(await a.client.request(RegistryPurge, { session: session('late').key, incarnation: 3 })).toEqual({ ended: 1 });
    await eventually(async () => !running(pid), 5000);
  });
});

describe('one connection for both classes when the profile grants no callbacks', () => {
  it('no sampling, elicitation or roots: app-safe and full share one generation and one process', async () => {
    const before = childProcessCount();
    const appSafe = await acquire('quiet', 'shared');
    const full = await acquire('quiet', 'shared', 'full');
    expect(full).toMatchObject({ generationId: appSafe.generationId, fence: appSafe.fence, connectionClass: 'full' });
    expect(appSafe.connectionClass).toBe('app-safe');
    expect(full.leaseId).not.toBe(appSafe.leaseId);
    expect(await serverPid(a, full)).toBe(await serverPid(a, appSafe));
    expect(childProcessCount() - before).toBe(1);
  });

  it('a profile granting model-path elicitation keeps two connections, two processes', async () => {
    const before = childProcessCount();
    const appSafe = await acquire(TOOLSETS[2], 'split');
    const full = await acquire(TOOLSETS[2], 'split', 'full');
    expect(full.generationId).not.toBe(appSafe.generationId);
    expect(await serverPid(a, full)).not.toBe(await serverPid(a, appSafe));
    expect(childProcessCount() - before).toBe(2);
  });
});
