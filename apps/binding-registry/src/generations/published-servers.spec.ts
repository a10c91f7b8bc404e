import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  byteReferenceSchema,
  APP_MIME_TYPE,
  ConnCallTool,
  ConnListTools,
  ConnReadResource,
  RegistryAcquireGeneration,
  RegistryPutProfile,
  RegistryPutToolset,
  type GenerationHandle,
} from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import { publishedBasicVanillaJs, publishedPdf, publishedSystemMonitor, REPO_ROOT, SAMPLE_PDF_PATH, type PublishedServer } from '@apphost/testing';
import { alice, profile, session, registrySuite } from '../test/registry-harness';

/*
 * The published MCP App example servers over real stdio, started from the specs of `@apphost/testing`
 * (`published-servers.ts`): each lists its UI tool, runs it with the given arguments and serves its View.
 */

const suite = registrySuite({
  setup: async (registry) => {
    await registry.client.request(RegistryPutProfile, { profileId: 'p', profile: profile() });
  },
});

async function bind(toolsetId: string, server: PublishedServer): Promise<GenerationHandle> {
  const { status } = await suite.registry.client.request(RegistryPutToolset, { toolsetId, spec: { connection: server.connection, profileId: 'p' } });
  expect(status.state).toBe('PROFILE_BOUND');
  return suite.registry.client.request(RegistryAcquireGeneration, {
    toolsetId,
    connectionClass: 'app-safe',
    principal: alice,
    session: session(toolsetId),
    holder: { kind: 'view', id: 'v' },
  });
}

type ToolMeta = { ui?: { resourceUri?: string; visibility?: string[] } } | undefined;
type ResourceItem = { uri: string; mimeType: string; text?: string };

const SERVERS = { basicVanillaJs: publishedBasicVanillaJs(), systemMonitor: publishedSystemMonitor(), pdf: publishedPdf() } as const;
const handles = new Map<keyof typeof SERVERS, GenerationHandle>();
const handleOf = (name: keyof typeof SERVERS): GenerationHandle => {
  const handle = handles.get(name);
  if (!handle) throw new Error(`${name} was not bound`);
  return handle;
};

beforeAll(async () => {
  for (const name of Object.keys(SERVERS) as (keyof typeof SERVERS)[]) handles.set(name, await bind(name, SERVERS[name]));
}, 90_000);

describe.each([
  ['basicVanillaJs', null],
  ['systemMonitor', 'poll-system-stats'],
  ['pdf', 'read_pdf_bytes'],
] as const)('published example server %s over stdio', (name, appOnlyTool) => {
  const server = SERVERS[name];

  it('lists its UI tool with _meta.ui.resourceUri through the bounded walk', async () => {
    const { tools, pages } = await requestOnGeneration(suite.registry.client, ConnListTools, handleOf(name), {});
    expect(pages).toBe(1);
    expect((tools.find((t) => t.name === server.uiTool.name)?._meta as ToolMeta)?.ui?.resourceUri).toBe(server.resourceUri);
    if (appOnlyTool) expect((tools.find((t) => t.name === appOnlyTool)?._meta as ToolMeta)?.ui?.visibility).toEqual(['app']);
  }, 30_000);

  it('runs the UI tool with its arguments on the same generation', async () => {
    const out = await requestOnGeneration(suite.registry.client, ConnCallTool, handleOf(name), {
      callId: 'c1',
      name: server.uiTool.name,
      arguments: server.uiTool.arguments,
    });
    expect(out).toMatchObject({ kind: 'complete' });
    if (out.kind === 'complete') expect(out.result['isError']).toBeFalsy();
  }, 30_000);
});

it.each(['basicVanillaJs', 'systemMonitor'] as const)(
  '%s serves its View resource through read-resource on the bus',
  async (name) => {
    const read = await requestOnGeneration(suite.registry.client, ConnReadResource, handleOf(name), { uri: SERVERS[name].resourceUri });
    const contents = read.contents as ResourceItem[];
    expect(contents).toHaveLength(1);
    expect(contents[0]).toMatchObject({ uri: SERVERS[name].resourceUri, mimeType: APP_MIME_TYPE });
    expect(contents[0].text?.length).toBeGreaterThan(10_000);
  },
  30_000,
);

describe('the pdf server serves only the local file it was given', () => {
  it('display_pdf opens the fixture PDF from disk (its URL and exact size), never a remote document', async () => {
    const handle = handleOf('pdf');
    const out = await requestOnGeneration(suite.registry.client, ConnCallTool, handle, {
      callId: 'show',
      name: 'display_pdf',
      arguments: SERVERS.pdf.uiTool.arguments,
    });
    if (out.kind !== 'complete') throw new Error('unexpected input round');
    expect(out.result['structuredContent']).toMatchObject({ url: pathToFileURL(SAMPLE_PDF_PATH).href, totalBytes: fs.statSync(SAMPLE_PDF_PATH).size });
    const listed = await requestOnGeneration(suite.registry.client, ConnCallTool, handle, { callId: 'list', name: 'list_pdfs', arguments: {} });
    if (listed.kind !== 'complete') throw new Error('unexpected input round');
    expect(listed.result['structuredContent']).toMatchObject({ localFiles: [pathToFileURL(SAMPLE_PDF_PATH).href], allowedDirectories: [] });
  }, 30_000);

  /*
   * The View is one ~4.3 MB HTML document: over the bus's message limit, so the reply moves in chunks; asked for by
   * reference, it stays in the owner and is fetched once by whoever renders it.
   */
  it('its View is one text/html;profile=mcp-app item: the package HTML byte for byte (about 4.3 MB), inline or by reference', async () => {
    const handle = handleOf('pdf');
    const html = fs.readFileSync(path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-pdf', 'dist', 'mcp-app.html'), 'utf8');
    const inline = await requestOnGeneration(suite.registry.client, ConnReadResource, handle, { uri: SERVERS.pdf.resourceUri }, { timeoutMs: 30_000 });
    const contents = inline.contents as ResourceItem[];
    expect(contents).toHaveLength(1);
    expect(contents[0]).toMatchObject({ uri: 'ui://pdf-viewer/mcp-app.html', mimeType: APP_MIME_TYPE });
    expect(contents[0].text).toBe(html);
    expect(Buffer.byteLength(contents[0].text ?? '', 'utf8')).toBeGreaterThan(4_000_000);

    const referenced = await requestOnGeneration(
      suite.registry.client,
      ConnReadResource,
      handle,
      { uri: SERVERS.pdf.resourceUri, textReferenceFromBytes: 64 * 1024 },
      { timeoutMs: 30_000 },
    );
    const [item] = referenced.contents;
    expect(item).not.toHaveProperty('text');
    expect(item).toMatchObject({ uri: 'ui://pdf-viewer/mcp-app.html', mimeType: APP_MIME_TYPE });
    // The server's own JSON string token for the text, never decoded by the owner; its text is the document exactly.
    const reference = byteReferenceSchema.parse(item['textLiteralReference']);
    expect(item['textBytes']).toBe(Buffer.byteLength(html, 'utf8'));
    const literal = Buffer.from(await suite.registry.client.fetchReference(reference));
    expect(literal.length).toBe(reference.totalBytes);
    expect(JSON.parse(literal.toString('utf8'))).toBe(html);
    // Fetched whole, the owner holds it no longer.
    await expect(suite.registry.client.fetchReference(reference)).rejects.toMatchObject({ code: 'DATA_LOSS' });
  }, 30_000);
});
