import type { Dialog, Page, Response } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { eventually, fixtureServerCommand, REPO_ROOT } from '@apphost/testing';
import { launchChromium, probeTarget, screenshotPath, startNpmStart, viewFrameOf, type StartedPlane } from './browser-harness';

/**
 * The reference host page in Debian's Chromium against `npm start` (its demo registration, the banner's link):
 * a published MCP App renders in the sandbox iframe, and the probe App checks the sandbox from inside it. The probe
 * toolset is allowed the same way the demo's are: its exact stdio spec in REGISTRY_STDIO_ALLOWLIST.
 */
jest.setTimeout(240_000);

const SHORT_LEASE_MS = 4000;
/** How long one whole run of the probe View's checks may take on a loaded machine (fetches, a CSP report, two tool calls). */
const PROBE_RUN_MS = 90_000;

/** Evaluated in a frame: its document, string globals, storage, URL and name (the browser's lib is not the tree's). */
const EVERYTHING_A_FRAME_HOLDS = `(() => {
  let globals = '';
  for (const key of Object.getOwnPropertyNames(window)) {
    try { const value = window[key]; globals += key + '=' + (typeof value === 'string' ? value : '') + ';'; } catch (e) { /* cross-origin accessor */ }
  }
  const storage = (s) => { try { return JSON.stringify({ ...s }); } catch (e) { return ''; } };
  return document.documentElement.outerHTML + globals + storage(localStorage) + storage(sessionStorage) + location.href + window.name;
})()`;

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
      CATALOG_APP_TOOLSETS: JSON.stringify({ probe: [{ toolsetId: 'probe' }, { toolsetId: 'probe-lease' }, { toolsetId: 'legacy' }] }),
    });
    const put = (what: string, body: unknown) =>
      fetch(`${plane.base}/v1/${what}`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${plane.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      }).then((res) => res.status);
    // The probe runs from TypeScript sources (slow to start on a loaded machine): its profiles give discovery a minute.
    const demoProfile = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', 'demo-profile.json'), 'utf8')) as { limits: Record<string, unknown> };
    const patient = { ...demoProfile, limits: { ...demoProfile.limits, discovery: { ...(demoProfile.limits['discovery'] as object), maxTimeMs: 60_000 } } };
    expect(await put('profiles/probe', patient)).toBeLessThan(300);
    // The same probe under a profile whose View lease is 4 s ("lease_probe"): the page must keep renewing it.
    expect(await put('profiles/short-lease', { ...patient, views: { leaseMs: SHORT_LEASE_MS } })).toBeLessThan(300);
    expect(await put('toolsets/probe', { connection: { kind: 'stdio', ...probe }, profileId: 'probe', requireConfirmation: false })).toBeLessThan(300);
    expect(
      await put('toolsets/probe-lease', { connection: { kind: 'stdio', ...probe }, profileId: 'short-lease', namePrefix: 'lease', requireConfirmation: false }),
    ).toBeLessThan(300);
    // The demo's basic-vanillajs spec (so already allowed) without a profile: its widgets are legacy, read-only.
    const vanilla = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', 'vanilla-toolset.json'), 'utf8')) as { connection: unknown };
    expect(await put('toolsets/legacy', { connection: vanilla.connection, profileId: null, namePrefix: 'legacy', requireConfirmation: false })).toBeLessThan(
      300,
    );
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
    const before = await page.locator('body').getAttribute('data-session');
    await page.click('#new-session');
    await eventually(async () => {
      const body = page.locator('body');
      const [shownApp, session, busy] = await Promise.all(['data-app', 'data-session', 'data-busy'].map((name) => body.getAttribute(name)));
      return shownApp === app && !!session && session !== before && busy === 'false';
    }, 90_000); // a new session's catalog discovers its toolsets: up to the probe profiles' minute on a loaded machine
    const card = page.locator(`article.tool[data-tool="${tool}"]`);
    // The catalog has loaded (the session is shown): the tool's card, or the page's words for why it is missing.
    await card.waitFor({ timeout: 5_000 }).catch(async () => {
      const said = await page.locator('#tools').innerText();
      throw new Error(
        `the catalog of ${app} shows no ${tool}: ${JSON.stringify(said.slice(0, 600))} ${JSON.stringify((await page.locator('#error').textContent()) ?? '')}`,
      );
    });
    await card.locator('textarea').fill(JSON.stringify(args));
    await card.locator('button').click();
    const widget = page.locator('section.widget');
    // The widget, or the page's own words for what went wrong.
    await eventually(async () => (await widget.count()) > 0 || ((await page.locator('#error').textContent()) ?? '') !== '', 60_000, 100);
    const shownError = (await page.locator('#error').textContent()) ?? '';
    expect(shownError).toBe('');
    return widget;
  }

  it('npm start registered the demo: its toolsets are bound to the example profile (their widgets render as Views)', async () => {
    for (const toolsetId of ['vanilla', 'careful', 'monitor', 'pdf', 'budget']) {
      const res = await fetch(`${plane.base}/v1/toolsets/${toolsetId}`, { headers: { Authorization: `Bearer ${plane.token}` } });
      expect(await res.json()).toMatchObject({ toolsetId, profileId: 'demo', state: 'PROFILE_BOUND' });
    }
  });

  it('serves its files with a fixed ETag for no-cache revalidation (304 on a match); API answers carry none', async () => {
    for (const file of ['/host/', '/host/app.js']) {
      const first = await fetch(`${plane.base}${file}`);
      const etag = first.headers.get('etag');
      expect(first.status).toBe(200);
      expect(first.headers.get('cache-control')).toBe('no-cache');
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
      expect((await fetch(`${plane.base}${file}`)).headers.get('etag')).toBe(etag);
      // As a browser revalidates (fetch would add `Cache-Control: no-cache` to a conditional request, which forces a 200).
      const again = await fetch(`${plane.base}${file}`, { headers: { 'If-None-Match': etag as string, 'Cache-Control': 'max-age=0' } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
    }
    const api = await fetch(`${plane.base}/v1/toolsets/vanilla`, { headers: { Authorization: `Bearer ${plane.token}` } });
    expect(api.status).toBe(200);
    expect(api.headers.get('etag')).toBeNull();
  });

  it('signs in from the banner link: the token moves to session storage and leaves the URL; no cookie', async () => {
    expect(plane.hostLink).toMatch(/\/host\/#token=/);
    await page.goto(plane.hostLink);
    await page.locator('#signed-in').waitFor();
    expect(page.url()).not.toContain(plane.token);
    expect(await page.evaluate('sessionStorage.getItem("apphost.token")')).toBe(plane.token);
    expect(await page.evaluate('document.cookie')).toBe('');
    expect((await browser.context.cookies()).length).toBe(0);
    expect(await page.locator('#apps option').evaluateAll((options) => options.map((o) => o.getAttribute('value')))).toEqual(
      expect.arrayContaining(['demo', 'monitor', 'pdf', 'budget', 'probe']),
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
    expect(await view.evaluate('self.origin')).not.toBe(hostOrigin);
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
    const proxy = view.parentFrame();
    expect(proxy).not.toBeNull();
    for (const frame of [view, proxy ?? view]) {
      const everything = await frame.evaluate<string>(EVERYTHING_A_FRAME_HOLDS);
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
    expect(await viewState(viewId ?? '')).toBe('CLOSED');
  });

  it("tears a View down on the View's request-teardown (the host's decision)", async () => {
    const widget = await callAsModel('probe', 'probe', { teardown: true });
    // The probe asks to close only after all its checks: this wait is the suite's patience for a whole probe run.
    await expect(widgetState(widget, 'closed', PROBE_RUN_MS)).resolves.toBe('closed');
    const viewId = await widget.getAttribute('data-view-id');
    expect(await viewState(viewId ?? '')).toBe('CLOSED');
  });

  it('shows a legacy widget as the read-only placeholder, in words, with its action to run the tool again', async () => {
    const widget = await callAsModel('probe', 'legacy_get-time');
    await expect(widgetState(widget, 'placeholder')).resolves.toBe('placeholder');
    expect(await widget.locator('.placeholder p').first().innerText()).toContain('without a host profile');
    const action = widget.locator('.placeholder button');
    expect(await action.count()).toBe(1);
    const events = () => page.locator('article.event:not(.audit)').count();
    const before = await events();
    page.once('dialog', (dialog) => void dialog.accept());
    await action.click();
    await expect(eventually(async () => ((await events()) > before ? 'a new event' : undefined), 30_000, 200)).resolves.toBe('a new event');
  });

  it('renews the lease of a visible View: it stays ACTIVE well past its first expiry', async () => {
    const widget = await callAsModel('probe', 'lease_probe');
    await expectLive(widget);
    const viewId = (await widget.getAttribute('data-view-id')) ?? '';
    const first = await viewSnapshot(viewId);
    await page.waitForTimeout(SHORT_LEASE_MS * 2.5);
    const later = await viewSnapshot(viewId);
    expect(later).toMatchObject({ state: 'ACTIVE', reason: null });
    expect(Date.parse(later.expiresAt)).toBeGreaterThan(Date.parse(first.expiresAt) + SHORT_LEASE_MS);
    expect(Date.parse(later.expiresAt)).toBeGreaterThan(Date.now());
  });

  it("basic-vanillajs's server-time button (a View tools/call through the governed RPC) updates the View", async () => {
    await callAsModel('demo', 'get-time');
    const view = await viewFrameOf(page, async (frame) => (await frame.locator('body').innerText()).includes('Server Time'));
    // The time the View shows: the tool result's at first, the server's answer to the View's own call after the click.
    const shownTime = async () => Date.parse(/\d{4}-\d\d-\d\dT[\d:.]+Z/.exec(await view.locator('body').innerText())?.[0] ?? '');
    const before = await eventually(
      async () => {
        const time = await shownTime();
        return time > 0 ? time : undefined;
      },
      20_000,
      100,
    );
    await page.waitForTimeout(1100);
    await view.getByRole('button', { name: 'Get Server Time' }).click();
    await expect(eventually(async () => ((await shownTime()) > before ? 'a later server time' : undefined), 20_000, 200)).resolves.toBe('a later server time');
  });

  it("the probe View's own calls: a model-only tool is refused (TOOL_NOT_APP_VISIBLE), an app-only one served", async () => {
    await callAsModel('probe', 'probe');
    const view = await viewFrameOf(page, async (frame) => (await frame.locator('#verdict').getAttribute('data-complete')) === 'true');
    const report = JSON.parse(await view.locator('#verdict').innerText()) as { verdict: string; checks: Record<string, boolean>; notes: unknown };
    expect(report.checks).toMatchObject({ modelOnlyRefused: true, appOnlyServed: true });
    expect(report.verdict).toBe('PASS');
  });

  it("the system monitor's View polls the app-only poll-system-stats through the governed RPC, and its audit events appear", async () => {
    const widget = await callAsModel('monitor', 'get-system-info');
    await expectLive(widget);
    await page.locator('#show-audit').check();
    const audit = page.locator('article.audit', { hasText: 'poll-system-stats' });
    await expect(
      (async () => {
        for (const deadline = Date.now() + 30_000; Date.now() < deadline; await page.waitForTimeout(1000)) {
          await page.click('#refresh-events');
          if ((await audit.count()) > 0) return 'audited';
        }
        return 'no audit event';
      })(),
    ).resolves.toBe('audited');
    expect(await audit.first().innerText()).toContain('executed');
    await page.screenshot({ path: screenshotPath('system-monitor'), fullPage: true });
  });

  it("the PDF viewer's View renders a local PDF it reads through the app-only read_pdf_bytes", async () => {
    const sample = pathToFileURL(path.join(REPO_ROOT, 'libs', 'testing', 'src', 'fixtures', 'sample.pdf')).href;
    const widget = await callAsModel('pdf', 'display_pdf', { url: sample });
    await expectLive(widget);
    const view = await viewFrameOf(page, async (frame) => (await frame.locator('canvas').count()) > 0, 60_000);
    expect(await view.locator('canvas').count()).toBeGreaterThan(0);
    await page.locator('#show-audit').check();
    const audit = page.locator('article.audit', { hasText: 'read_pdf_bytes' });
    await expect(
      eventually(
        async () => {
          await page.click('#refresh-events');
          return (await audit.count()) > 0 ? 'audited' : undefined;
        },
        30_000,
        1000,
      ),
    ).resolves.toBe('audited');
    await page.screenshot({ path: screenshotPath('pdf'), fullPage: true });
  });

  it("the budget allocator's View renders its data: the categories of get-budget-data, one slider row each", async () => {
    const widget = await callAsModel('budget', 'get-budget-data');
    await expectLive(widget);
    const categories = ['Marketing', 'Engineering', 'Operations', 'Sales', 'R&D'];
    const view = await viewFrameOf(page, async (frame) => (await frame.locator('.slider-row').count()) === categories.length, 60_000);
    const text = await view.locator('#sliders-container').innerText();
    for (const name of categories) expect(text).toContain(name);
    expect(await view.locator('.slider-row[data-category-id="marketing"] .slider').count()).toBe(1);
    expect(await view.locator('#budget-selector').innerText()).toContain('$');
    await page.screenshot({ path: screenshotPath('budget-allocator'), fullPage: true });
  });

  it('shows the model-context block and the pending message a View sent (ui/message confirmed by the user) beside the widgets', async () => {
    const dialogs: string[] = [];
    const accept = (dialog: Dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    };
    page.on('dialog', accept);
    try {
      await callAsModel('probe', 'probe', { converse: 'hello panels' });
      const view = await viewFrameOf(page, async (frame) => (await frame.locator('#verdict').innerText()).includes('"conversation"'), 60_000);
      const report = JSON.parse(await view.locator('#verdict').innerText()) as { notes: { conversation: unknown } };
      expect(report.notes.conversation).toEqual({ context: {}, message: {} });
      expect(dialogs.some((text) => text.includes('probe message: hello panels'))).toBe(true);
      const context = page.locator('#model-context');
      await expect(
        eventually(async () => ((await context.innerText()).includes('probe context: hello panels') ? 'shown' : undefined), 30_000, 200),
      ).resolves.toBe('shown');
      const message = page.locator('#messages article.message', { hasText: 'probe message: hello panels' });
      await message.waitFor({ timeout: 30_000 });
      expect(await message.getAttribute('data-state')).toBe('ACCEPTED');
      expect(await message.innerText()).toContain('ACCEPTED');
      await page.screenshot({ path: screenshotPath('conversation'), fullPage: true });
    } finally {
      page.off('dialog', accept);
    }
  });

  async function expectLive(widget: ReturnType<Page['locator']>): Promise<void> {
    await expect(widgetState(widget, 'live')).resolves.toBe('live');
  }

  async function widgetState(widget: ReturnType<Page['locator']>, want = 'closed', timeoutMs = 30_000): Promise<string | null> {
    return eventually(async () => ((await widget.getAttribute('data-state')) === want ? want : undefined), timeoutMs, 100).catch(async () => {
      throw new Error(`the widget never reached ${want}: ${JSON.stringify(await widget.evaluate((e) => e.outerHTML.slice(0, 600)))}`);
    });
  }

  async function viewSnapshot(viewId: string): Promise<{ state: string; reason: string | null; expiresAt: string }> {
    expect(viewId).toMatch(/^vw-/);
    const res = await fetch(`${plane.base}/v1/views/${viewId}`, { headers: { Authorization: `Bearer ${plane.token}` } });
    return (await res.json()) as { state: string; reason: string | null; expiresAt: string };
  }

  async function viewState(viewId: string): Promise<string> {
    return (await viewSnapshot(viewId)).state;
  }
});
