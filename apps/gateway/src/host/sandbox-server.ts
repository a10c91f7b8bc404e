import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import { AppHostError, HTTP_STATUS_BY_CODE } from '@apphost/contracts';
import { normalizeOrigin } from '../auth/origin';
import { fixedEtagOf } from './fixed-etag';
import { sandboxCspOf } from './sandbox-csp';
import { SandboxReasons, type SandboxReason } from './sandbox-reasons';

export interface SandboxOptions {
  /** The sandbox proxy's script. */
  proxyJs: string;
  /** Whether an origin may embed Views (it becomes the proxy page's `frame-ancestors`). */
  isHostOrigin(origin: string): boolean;
  /** Development: loopback origins may appear in a View CSP (as the bootstrap's builder allows them). */
  development: boolean;
}

// The outer document only holds the proxy: the View's document arrives by postMessage and renders in its inner iframe.
const PROXY_HTML =
  '<!doctype html><html><head><meta charset="utf-8"><title>AppHost sandbox</title>' +
  '<style>html,body{margin:0;height:100%;overflow:hidden;background:transparent}iframe{border:0;width:100%;height:100%;display:block}</style>' +
  '</head><body><script src="/sandbox/proxy.js"></script></body></html>';

/**
 * The sandbox origin: a second listener that serves only the sandbox proxy, never the API, a credential or a
 * cookie. `GET /sandbox/proxy?host=<origin>&csp=<policy>` answers the proxy page with the View's CSP as an HTTP
 * header (checked to be exactly one the bootstrap builds; the spec default without `csp`) plus `frame-ancestors`
 * naming the host page's origin. The proxy renders the View's document in an inner `srcdoc` iframe, which inherits
 * that policy: the browser enforces the CSP on the View, and the sandbox never sees the grant.
 */
export class SandboxServer {
  private readonly server: http.Server;

  constructor(private readonly options: SandboxOptions) {
    const app = express();
    app.disable('x-powered-by');
    // No hashing of answers: the proxy page is per View (no-store); the script, the same for every View, carries a
    // fixed ETag, so each View's frame revalidates it (304) rather than downloading it again.
    app.disable('etag');
    const proxyJsEtag = fixedEtagOf(options.proxyJs);
    app.get('/sandbox/proxy', (req, res) => this.proxyPage(req, res));
    app.get('/sandbox/proxy.js', (_req, res) => {
      res.set({ 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff', ETag: proxyJsEtag });
      res.send(this.options.proxyJs);
    });
    app.use((_req: Request, res: Response) => refuse(res, 'NOT_FOUND', 'SANDBOX_NOT_FOUND', 'the sandbox origin serves only its proxy'));
    this.server = http.createServer(app);
  }

  async listen(port: number, host: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    if (!this.server.listening) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private proxyPage(req: Request, res: Response): void {
    const host = single(req.query['host']);
    const origin = host === undefined ? undefined : normalizeOrigin(host);
    if (!origin || !this.options.isHostOrigin(origin))
      return refuse(res, 'PERMISSION_DENIED', 'SANDBOX_HOST_NOT_ALLOWED', 'the host page origin may not embed Views');
    const declared = req.query['csp'];
    const csp =
      declared === undefined ? sandboxCspOf(undefined, this.options) : typeof declared === 'string' ? sandboxCspOf(declared, this.options) : undefined;
    if (!csp) return refuse(res, 'INVALID_ARGUMENT', 'SANDBOX_CSP_INVALID', 'the csp parameter is not a View policy AppHost builds');
    res.set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': `${csp}; frame-ancestors ${origin}`,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    });
    res.send(PROXY_HTML);
  }
}

function single(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function refuse(res: Response, code: 'NOT_FOUND' | 'PERMISSION_DENIED' | 'INVALID_ARGUMENT', reason: SandboxReason, message: string): void {
  const error = new AppHostError(code, message, { details: SandboxReasons.details(reason) });
  res.status(HTTP_STATUS_BY_CODE[code]).set('Cache-Control', 'no-store').json({ error: error.toEnvelope() });
}
