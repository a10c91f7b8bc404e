import {
  ConnCallTool,
  ConnListTools,
  ConnReadResource,
  RegistryAcquireGeneration,
  RegistryPutProfile,
  RegistryPutToolset,
  type GenerationHandle,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import { dropSchemasWithPrefix, type PrivateNats, PUBLISHED_SERVERS, startFakeProviders, startPrivateNats, uniquePrefix } from '@apphost/testing';
import { alice, bootRegistry, profile, PROVIDER_FAKES, publishedSpec, type RegistryUnderTest, session } from '../test/registry-harness';

const prefix = uniquePrefix();
let nats: PrivateNats;
let registry: RegistryUnderTest;
let providers: { stop(): Promise<void> };

beforeAll(async () => {
  nats = await startPrivateNats();
  providers = await startFakeProviders(nats.url, PROVIDER_FAKES);
  registry = await bootRegistry(nats.url, prefix);
  await registry.client.request(RegistryPutProfile, { profileId: 'p', profile: profile() });
}, 60_000);

afterAll(async () => {
  await registry?.stop();
  await providers?.stop();
  await nats?.stop();
  await dropSchemasWithPrefix(prefix);
});

async function acquire(toolsetId: string): Promise<GenerationHandle> {
  return registry.client.request(RegistryAcquireGeneration, {
    toolsetId,
    connectionClass: 'app-safe',
    principal: alice,
    session: session(toolsetId),
    holder: { kind: 'view', id: 'v' },
  });
}

describe.each([
  ['basicVanillaJs', PUBLISHED_SERVERS.basicVanillaJs],
  ['systemMonitor', PUBLISHED_SERVERS.systemMonitor],
] as const)('published example server %s over stdio', (name, server) => {
  let handle: GenerationHandle;

  beforeAll(async () => {
    const { status } = await registry.client.request(RegistryPutToolset, { toolsetId: name, spec: publishedSpec(name, 'p') });
    expect(status.state).toBe('PROFILE_BOUND');
    handle = await acquire(name);
  }, 60_000);

  it('lists its UI tool with _meta.ui.resourceUri through the bounded walk', async () => {
    const { tools, pages } = await requestOnGeneration(registry.client, ConnListTools, handle, {});
    expect(pages).toBe(1);
    const ui = tools.find((t) => t.name === server.uiTool);
    expect((ui?._meta as { ui?: { resourceUri?: string } })?.ui?.resourceUri).toBe(server.resourceUri);
    if ('appOnlyTool' in server) {
      expect((tools.find((t) => t.name === server.appOnlyTool)?._meta as { ui?: { visibility?: string[] } })?.ui?.visibility).toEqual(['app']);
    }
  }, 30_000);

  it('calls the UI tool and reads its View resource on the same generation', async () => {
    const out = await requestOnGeneration(registry.client, ConnCallTool, handle, { callId: 'c1', name: server.uiTool, arguments: {} });
    expect(out).toMatchObject({ kind: 'complete' });
    if (out.kind === 'complete') expect(out.result['isError']).toBeFalsy();
    const read = await requestOnGeneration(registry.client, ConnReadResource, handle, { uri: server.resourceUri });
    const contents = read.contents as { uri: string; mimeType: string; text?: string }[];
    expect(contents).toHaveLength(1);
    expect(contents[0]).toMatchObject({ uri: server.resourceUri, mimeType: 'text/html;profile=mcp-app' });
    expect(contents[0].text?.length).toBeGreaterThan(10_000);
  }, 30_000);
});
