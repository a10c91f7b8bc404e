import { buildViewCsp } from '@apphost/policy';
import { dropSchemasWithPrefix, publishedPdf, startFakeProviders, startPrivateNats, uniquePrefix, type PrivateNats } from '@apphost/testing';
import { token } from './catalog-harness';
import { bootViewPlane, directRead, putProfile, putToolset, sessionWithUiCall, viewHttp, viewProfile, type ViewPlane } from './views-harness';

/**
 * The published PDF viewer (`@modelcontextprotocol/server-pdf` over stdio, a local one-page PDF): its ~4.3 MB View
 * stays with the binding-registry owner that read it (governed-operations checks the read's policy and passes a
 * reference on), is fetched once by the gateway in chunked bus replies, and arrives byte-identical to a direct SDK read; its declared CSP domains and permission make the header and `allow` end to
 * end. Budget: ~25 s to boot and bind, ~30 s of tests (2 busy cores).
 */
jest.setTimeout(150_000);

const PDF = publishedPdf();
const command = { command: PDF.connection.command, args: PDF.connection.args, cwd: PDF.connection.cwd };

describe('the PDF View in the plane', () => {
  const prefix = uniquePrefix();
  let nats: PrivateNats;
  let providers: { stop(): Promise<void> };
  let plane: ViewPlane;
  let http: ReturnType<typeof viewHttp>;
  let alice: string;

  beforeAll(async () => {
    nats = await startPrivateNats();
    providers = await startFakeProviders(nats.url, ['export-audit']);
    // Every setting at its default: a View reads up to 8 MiB, as the profile's View document limit.
    plane = await bootViewPlane(nats.url, prefix, { pdf: ['pdf'] });
    http = viewHttp(plane);
    alice = await token('alice', 'runtime view');
    await putProfile(plane, 'p1', viewProfile());
    expect(await putToolset(plane, 'pdf', { connection: PDF.connection, profileId: 'p1' })).toBe('PROFILE_BOUND');
  }, 120_000);

  afterAll(async () => {
    await plane?.stop();
    await providers?.stop();
    await nats?.stop();
    await dropSchemasWithPrefix(prefix);
  });

  it('the 4.3 MB document arrives byte-identical to a direct read, with its declared CSP domains and clipboard permission', async () => {
    const ev = await sessionWithUiCall(http, alice, { appName: 'pdf', sessionId: 'pdf-1', tool: PDF.uiTool.name, arguments: PDF.uiTool.arguments });
    expect(ev.widgets).toEqual([expect.objectContaining({ resourceUri: PDF.resourceUri, toolsetId: 'pdf' })]);

    const opened = await http('POST', '/v1/views', {
      bearer: alice,
      body: { appName: 'pdf', sessionId: 'pdf-1', eventId: ev.eventId, functionCallId: 'call-1' },
    });
    expect(opened.status).toBe(201);
    const direct = await directRead(command, PDF.resourceUri);
    expect(direct.contents).toHaveLength(1);
    const item = direct.contents[0] as { text: string; _meta: { ui: { csp: unknown; permissions: unknown } } };
    const html = opened.body.document.html as string;
    expect(Buffer.byteLength(html)).toBe(Buffer.byteLength(item.text));
    expect(Buffer.byteLength(html)).toBeGreaterThan(4_000_000);
    expect(html === item.text).toBe(true);
    expect(opened.body.toolInput).toEqual({ arguments: PDF.uiTool.arguments });
    expect(opened.body.toolResult.structuredContent).toMatchObject({ viewUUID: expect.any(String) });

    // The CSP is the policy's table applied to what the server declared; nothing it declared was dropped.
    expect(opened.body.document.meta).toMatchObject({ csp: item._meta.ui.csp, permissions: item._meta.ui.permissions });
    const expected = buildViewCsp(item._meta.ui.csp, { development: false });
    expect(opened.body.csp).toEqual({ header: expected.header, rejected: [] });
    const directives = Object.fromEntries((opened.body.csp.header as string).split(/;\s*/).map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives['connect-src']).toContain('https://unpkg.com');
    expect(directives['script-src']).toContain('https://unpkg.com');
    expect(directives['default-src']).toEqual(["'none'"]);
    expect(opened.body.allow).toBe('clipboard-write');

    // The renew and close of a View this large cost nothing more.
    const viewId = opened.body.viewId as string;
    expect((await http('POST', `/v1/views/${viewId}:renew`, { bearer: alice, headers: { 'x-apphost-view-grant': opened.body.grant } })).status).toBe(200);
    expect((await http('DELETE', `/v1/views/${viewId}`, { bearer: alice })).status).toBe(204);
  });

  it('the app-only tools of the PDF viewer stay out of the model catalog', async () => {
    const catalog = await http('GET', '/v1/sessions/pdf-1/catalog?appName=pdf', { bearer: alice });
    expect(catalog.status).toBe(200);
    const names = (catalog.body.tools as Array<{ name: string }>).map((t) => t.name);
    expect(names).toContain(PDF.uiTool.name);
    for (const appOnly of ['read_pdf_bytes', 'submit_page_data', 'poll_pdf_commands', 'save_pdf']) expect(names).not.toContain(appOnly);
  });
});
