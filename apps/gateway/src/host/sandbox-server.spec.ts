import { buildViewCsp } from '@apphost/policy';
import { SandboxServer } from './sandbox-server';

const HOST = 'https://host.example';

describe('SandboxServer (a real listener)', () => {
  const server = new SandboxServer({ proxyJs: '/* proxy */', development: false, isHostOrigin: (origin) => origin === HOST });
  let base: string;

  beforeAll(async () => {
    base = `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
  });
  afterAll(() => server.close());

  const proxy = (query: Record<string, string>) => fetch(`${base}/sandbox/proxy?${new URLSearchParams(query).toString()}`);

  it('serves the proxy page with the View CSP as a header, framed only by the host page origin', async () => {
    const csp = buildViewCsp({ connectDomains: ['https://api.example.com'] }, { development: false }).header;
    const res = await proxy({ host: HOST, csp });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(`${csp}; frame-ancestors ${HOST}`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toContain('<script src="/sandbox/proxy.js"></script>');
  });

  it('serves the spec default CSP when the View declared none', async () => {
    const res = await proxy({ host: HOST });
    expect(res.headers.get('content-security-policy')).toBe(`${buildViewCsp(undefined, { development: false }).header}; frame-ancestors ${HOST}`);
  });

  it('refuses a host origin that may not embed Views, and a widened CSP, with typed reasons', async () => {
    const foreign = await proxy({ host: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED', details: { reason: 'SANDBOX_HOST_NOT_ALLOWED' } } });
    const widened = await proxy({ host: HOST, csp: buildViewCsp(undefined, { development: false }).header.replace("connect-src 'none'", 'connect-src *') });
    expect(widened.status).toBe(400);
    expect(await widened.json()).toMatchObject({ error: { code: 'INVALID_ARGUMENT', details: { reason: 'SANDBOX_CSP_INVALID' } } });
  });

  it('serves the proxy script, and nothing else', async () => {
    const script = await fetch(`${base}/sandbox/proxy.js`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await script.text()).toBe('/* proxy */');
    // The same script for every View: a fixed ETag, and a browser's revalidation (max-age=0, as a reload sends) is 304.
    const etag = script.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect((await fetch(`${base}/sandbox/proxy.js`)).headers.get('etag')).toBe(etag);
    const revalidated = await fetch(`${base}/sandbox/proxy.js`, { headers: { 'If-None-Match': etag!, 'Cache-Control': 'max-age=0' } });
    expect(revalidated.status).toBe(304);
    expect(await revalidated.text()).toBe('');
    const page = await proxy({ host: HOST });
    expect(page.headers.get('etag')).toBeNull();
    const other = await fetch(`${base}/v1/services`);
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: { details: { reason: 'SANDBOX_NOT_FOUND' } } });
  });
});
