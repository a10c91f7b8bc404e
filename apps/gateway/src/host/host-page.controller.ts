import { Controller, Get, Inject, Res } from '@nestjs/common';
import { Public } from '../auth';
import { fixedEtagOf } from './fixed-etag';
import { HOST_PAGE, type HostPage, type HostPageConfig } from './host-page';

// Structural slice of express' response.
interface FileResponse {
  set(headers: Record<string, string>): unknown;
  send(body: string): unknown;
  redirect(status: number, url: string): unknown;
}

/**
 * The reference web host's files: public (they hold no data; the page signs in with a token the user brings) and
 * served with their own CSP: scripts and connections to this origin only, frames only from the sandbox origin.
 */
@Controller('host')
@Public()
export class HostPageController {
  /** The files never change while the process runs: each one's ETag is computed once, for `no-cache` revalidation. */
  private readonly etags: { indexHtml: string; appJs: string };

  constructor(@Inject(HOST_PAGE) private readonly page: HostPage) {
    this.etags = { indexHtml: fixedEtagOf(page.assets.indexHtml), appJs: fixedEtagOf(page.assets.appJs) };
  }

  @Get()
  index(@Res() res: FileResponse): void {
    res.set({ ...this.headers('text/html; charset=utf-8'), ETag: this.etags.indexHtml, 'Content-Security-Policy': this.pageCsp() });
    res.send(this.page.assets.indexHtml);
  }

  @Get('app.js')
  script(@Res() res: FileResponse): void {
    res.set({ ...this.headers('text/javascript; charset=utf-8'), ETag: this.etags.appJs });
    res.send(this.page.assets.appJs);
  }

  @Get('config.json')
  config(): HostPageConfig {
    return this.page.config();
  }

  private headers(type: string): Record<string, string> {
    return { 'Content-Type': type, 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };
  }

  private pageCsp(): string {
    return [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data:",
      "connect-src 'self'",
      `frame-src ${this.page.sandboxOrigin()}`,
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; ');
  }
}
