import type { Page, Response } from 'playwright-core';
import { fixtureServerCommand } from '@apphost/testing';
import { launchChromium, probeTarget, screenshotPath, startNpmStart, viewFrameOf, type StartedPlane } from './browser-harness';

/**
 * The reference host page in Debian's Chromium against `npm start` (its demo registration, the banner's link):
 * a published MCP App renders in the sandbox iframe, and the probe App checks the sandbox from inside it. The probe
 * toolset is allowed the same way the demo's are: its exact stdio spec in REGISTRY_STDIO_ALLOWLIST.
 */
jest.setTimeout(240_000);

const probeArgs = (allowed: string, blocked: string) => fixtureServerCommand('view-probe', [`--allowed=${allowed}`, `--blocked=${blocked}`]);

describe('reference host page in Chromium', () => {
  let plane: StartedPlane;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let allowed: Awaited<ReturnType<typeof probeTarget>>;
  let blocked: Awaited<ReturnType<typeof probeTarget>>;
  let page: Page;
  /** The grants the page received from `POST /v1/views` (the test reads the wire; the page never exposes them). */
  const grants: string[] = [];

  beforeAll(async () => {
    [allowed, blocked] = await Promise.all([probeTarget(), probeTarget()]);
    const probe = probeArgs(allowed.origin, blocked.origin);
    plane = await startNpmStart({
      REGISTRY_STDIO_ALLOWLIST: JSON.stringify([{ command: probe.command, args: probe.args, cwd: probe.cwd }]),
      CATALOG_APP_TOOLSETS: JSON.stringify({ probe: [{ toolsetId: 'probe' }] }),
    });
    const put = await fetch(`${plane.base}/v1/toolsets/probe`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${plane.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ connection: { kind: 'stdio', ...probe }, profileId: 'demo', requireConfirmation: false }),
    });
    expect(put.status).toBeLessThan(300);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('response', (response: Response) => {
      if (response.request().method() === 'POST' && new URL(response.url()).pathname === '/v1/views')
        void response.json().then(
          (body: { grant?: string }) => body.grant && grants.push(body.grant),
          () => undefined,
        );
    });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await plane?.stop();
    await allowed?.close();
    await blocked?.close();
  });

  /** A new session of `app` from the page's chooser, then one "call as the model" of `tool`; resolves with its widget. */
  async function callAsModel(app: string, tool: string, args: Record<string, unknown> = {}) {
    const appInput = page.locator('#app');
    if ((await appInput.inputValue()) !== app) {
      await appInput.fill(app);
      await appInput.dispatchEvent('change');
    }
    const before = await page.evaluate(() => document.body.dataset['session'] ?? '');
    await page.click('#new-session');
    await page.waitForFunction(
      ([appName, previous]) =>
        document.body.dataset['app'] === appName &&
        !!document.body.dataset['session'] &&
        document.body.dataset['session'] !== previous &&
        document.body.dataset['busy'] === 'false',
      [app, before] as const,
    );
    const card = page.locator(`article.tool[data-tool="${tool}"]`);
    await card.waitFor();
    await card.locator('textarea').fill(JSON.stringify(args));
    await card.locator('button').click();
    const widget = page.locator('section.widget');
    await widget.waitFor();
    return widget;
  }

  it('signs in from the banner link: the token moves to session storage and leaves the URL; no cookie', async () => {
    expect(plane.hostLink).toMatch(/\/host\/#token=/);
    await page.goto(plane.hostLink);
    await page.locator('#signed-in').waitFor();
    expect(page.url()).not.toContain(plane.token);
    expect(await page.evaluate(() => sessionStorage.getItem('apphost.token'))).toBe(plane.token);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect((await browser.context.cookies()).length).toBe(0);
    expect(await page.locator('#apps option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value))).toEqual(
      expect.arrayContaining(['demo', 'monitor', 'probe']),
    );
  });

  it('renders the basic-vanillajs View of get-time in the sandbox origin', async () => {
    const widget = await callAsModel('demo', 'get-time');
    const view = await viewFrameOf(page, async (frame) => (await frame.locator('body').innerText()).includes('Server Time'));
    await expectLive(widget);
    const proxy = view.parentFrame();
    const hostOrigin = new URL(page.url()).origin;
    expect(proxy && new URL(proxy.url()).origin).not.toBe(hostOrigin);
    expect(proxy?.url()).toMatch(/\/sandbox\/proxy\?/);
    expect(await view.evaluate(() => self.origin)).not.toBe(hostOrigin);
    await page.screenshot({ path: screenshotPath('basic-vanillajs'), fullPage: true });
  });

  it('the probe View passes its sandbox checks: origin, message order, CSP both ways, no grant', async () => {
    await callAsModel('probe', 'probe');
    const view = await viewFrameOf(page, async (frame) => (await frame.locator('#verdict').getAttribute('data-verdict')) !== 'PENDING');
    const report = JSON.parse(await view.locator('#verdict').innerText()) as { checks: Record<string, boolean>; notes: Record<string, unknown> };
    expect(report.checks).toMatchObject({
      originIsolated: true,
      nothingBeforeInitialized: true,
      toolInputOnceBeforeResult: true,
      cspBlocksUndeclared: true,
      cspAllowsDeclared: true,
      noGrantInView: true,
    });
    expect(blocked.hits()).toBe(0);
    expect(allowed.hits()).toBeGreaterThan(0);
    // The grant the page holds is nowhere in the View's document, storage or globals, nor in the proxy's.
    expect(grants.length).toBeGreaterThan(0);
    for (const frame of [view, view.parentFrame()!]) {
      const everything = await frame.evaluate(() => {
        let globals = '';
        for (const key of Object.getOwnPropertyNames(window)) {
          try {
            const value = (window as unknown as Record<string, unknown>)[key];
            globals += `${key}=${typeof value === 'string' ? value : ''};`;
          } catch {
            // a cross-origin accessor: not the View's own
          }
        }
        const storage = (s: Storage) => {
          try {
            return JSON.stringify({ ...s });
          } catch {
            return '';
          }
        };
        return document.documentElement.outerHTML + globals + storage(localStorage) + storage(sessionStorage) + location.href + window.name;
      });
      for (const grant of grants) expect(everything).not.toContain(grant);
    }
    await page.screenshot({ path: screenshotPath('view-probe'), fullPage: true });
  });

  it('tears a View down from the page: ui/resource-teardown, then DELETE; the View reads CLOSED', async () => {
    const widget = await callAsModel('demo', 'get-time');
    await expectLive(widget);
    const viewId = await widget.getAttribute('data-view-id');
    await widget.locator('button.widget-close').click();
    await expect(widgetState(widget)).resolves.toBe('closed');
    expect(await viewState(viewId!)).toBe('CLOSED');
  });

  it("tears a View down on the View's request-teardown (the host's decision)", async () => {
    const widget = await callAsModel('probe', 'probe', { teardown: true });
    await expect(widgetState(widget)).resolves.toBe('closed');
    const viewId = await widget.getAttribute('data-view-id');
    expect(await viewState(viewId!)).toBe('CLOSED');
  });

  async function expectLive(widget: ReturnType<Page['locator']>): Promise<void> {
    await expect(widgetState(widget, 'live')).resolves.toBe('live');
  }

  async function widgetState(widget: ReturnType<Page['locator']>, want = 'closed'): Promise<string | null> {
    await widget
      .page()
      .waitForFunction(([element, state]) => (element as HTMLElement).dataset['state'] === state, [await widget.elementHandle(), want] as const, {
        timeout: 30_000,
      });
    return widget.getAttribute('data-state');
  }

  async function viewState(viewId: string): Promise<string> {
    const res = await fetch(`${plane.base}/v1/views/${viewId}`, { headers: { Authorization: `Bearer ${plane.token}` } });
    return ((await res.json()) as { state: string }).state;
  }
});
