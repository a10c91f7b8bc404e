import { randomBytes } from 'node:crypto';
import {
  RegistryGetToolset,
  RegistryPutProfile,
  RegistryPutToolset,
  RegistryRebindToolset,
  RegistryRotateKeys,
  RegistryVerifyBindingRevision,
} from '@apphost/contracts';
import { dropSchemasWithPrefix, expectAppError, type PrivateNats, startFakeProviders, startPrivateNats, uniquePrefix } from '@apphost/testing';
import { bootRegistry, fixtureSpec, profile, PROVIDER_FAKES, type RegistryUnderTest } from '../test/registry-harness';

const prefix = uniquePrefix();
const hostKey = randomBytes(32).toString('base64');
let nats: PrivateNats;
let providers: { stop(): Promise<void> };
const booted: RegistryUnderTest[] = [];
const boot = async (env: Record<string, string> = {}) => {
  const r = await bootRegistry(nats.url, prefix, { REGISTRY_HOST_KEY: hostKey, ...env });
  booted.push(r);
  return r;
};

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
}, 30_000);

afterAll(async () => {
  for (const r of booted) await r.stop();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

describe('key ring', () => {
  let revision: string;

  it('a restart with the same host key verifies what the previous run signed', async () => {
    const first = await boot();
    await first.client.request(RegistryPutProfile, { profileId: 'p', profile: profile() });
    const { status } = await first.client.request(RegistryPutToolset, { toolsetId: 't', spec: fixtureSpec('stateful-nonce', 'p') });
    revision = status.bindingRevision!;
    expect(revision).toMatch(/^v1\.k[0-9a-z]+\.[0-9a-f]{64}$/);
    await first.stop();
    const second = await boot();
    expect(await second.client.request(RegistryVerifyBindingRevision, { toolsetId: 't', bindingRevision: revision })).toMatchObject({
      valid: true,
      current: true,
    });
    const tampered = revision.slice(0, -1) + (revision.endsWith('0') ? '1' : '0');
    expect(await second.client.request(RegistryVerifyBindingRevision, { toolsetId: 't', bindingRevision: tampered })).toMatchObject({
      valid: false,
      current: false,
    });
  }, 60_000);

  it('a missing key fails closed', async () => {
    const r = booted[booted.length - 1];
    const missing = revision.replace(/^v1\.[^.]+\./, 'v1.kmissing.');
    expect(await expectAppError(r.client.request(RegistryVerifyBindingRevision, { toolsetId: 't', bindingRevision: missing }))).toMatchObject({
      code: 'FAILED_PRECONDITION',
      details: { reason: 'KEY_UNKNOWN' },
    });
  });

  it('a wrong host key stops startup instead of serving with unreadable keys', async () => {
    await expect(bootRegistry(nats.url, prefix, { REGISTRY_HOST_KEY: randomBytes(32).toString('base64') })).rejects.toMatchObject({
      details: { reason: 'KEY_UNWRAP_FAILED' },
    });
  }, 30_000);

  it('two instances agree across a rotation; the old key verifies inside its window; a retired key fails closed', async () => {
    const x = booted[booted.length - 1];
    const y = await boot();
    const rotated = await x.client.request(RegistryRotateKeys, {});
    expect(rotated.verifyingKeyIds).toContain(revision.split('.')[1]);
    expect(JSON.stringify(rotated)).not.toMatch(/material|[A-Za-z0-9+/]{43}=/);
    // Signed by whichever replica materializes the new binding generation, verified by both.
    const rebound = await y.client.request(RegistryRebindToolset, { toolsetId: 't' });
    expect(rebound.bindingRevision?.split('.')[1]).toBe(rotated.activeKeyId);
    for (const r of [x, y]) {
      expect(await r.client.request(RegistryVerifyBindingRevision, { toolsetId: 't', bindingRevision: rebound.bindingRevision! })).toMatchObject({
        valid: true,
        keyId: rotated.activeKeyId,
      });
      expect(await r.client.request(RegistryVerifyBindingRevision, { toolsetId: 't', bindingRevision: revision })).toMatchObject({ valid: true });
    }
    // A replica configured with a zero-length window (the only one left, so it serves the rotation) retires
    // every key rotated out before it.
    const z = await boot({ REGISTRY_KEY_VERIFY_WINDOW_MS: '0' });
    await x.stop();
    await y.stop();
    const again = await z.client.request(RegistryRotateKeys, {});
    expect(again.retiredKeyIds).toEqual(expect.arrayContaining([rotated.activeKeyId]));
    const retired = await expectAppError(z.client.request(RegistryVerifyBindingRevision, { toolsetId: 't', bindingRevision: rebound.bindingRevision! }));
    expect(retired).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'KEY_RETIRED' } });
    expect((await z.client.request(RegistryGetToolset, { toolsetId: 't' })).state).toBe('PROFILE_BOUND');
  }, 60_000);
});
