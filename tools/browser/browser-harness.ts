import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Frame, type Page } from 'playwright-core';
import { eventually, REPO_ROOT } from '@apphost/testing';

/** Where screenshots go (a CI artifact directory; `tmp/` is ignored by git). */
export const ARTIFACTS = path.join(REPO_ROOT, 'tmp', 'browser');

/** Debian's Chromium, offline: no component updates, sync, QUIC or background traffic; a fresh profile per run. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A loopback origin that answers `probe-ok` to anyone (CORS `*`): what the probe View fetches. */
export async function probeTarget(): Promise<{ origin: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'Access-Control-Allow-Origin': '*', 'Content-Type': 'text/plain' });
    res.end('probe-ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return { origin, hits: () => hits, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export interface StartedPlane {
  base: string;
  /** The banner's host page link, `…/host/#token=…`. */
  hostLink: string;
  token: string;
  output: () => string;
  stop(): Promise<void>;
}

/**
 * `npm start` as a person runs it (its entry point, on a free port, data in a temporary APPHOST_HOME, nothing of
 * the test environment's stores: the embedded defaults), plus `extraEnv`. Resolves once the banner printed the host
 * page link.
 */
export async function startNpmStart(extraEnv: Record<string, string>): Promise<StartedPlane> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-browser-'));
  fs.chmodSync(home, 0o755);
  const port = await freePort();
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? home, APPHOST_PORT: String(port), APPHOST_HOME: home, LOG_LEVEL: 'warn', ...extraEnv };
  const child: ChildProcess = spawn(process.execPath, ['-r', './tools/register.cjs', 'tools/plane/main.ts'], {
    cwd: REPO_ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const stop = async () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      process.kill(-child.pid, 'SIGINT');
      const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, 'SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(home, { recursive: true, force: true });
  };
  try {
    const hostLink = await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${output}`);
        return /open the host page: (\S+)/.exec(output)?.[1];
      },
      120_000,
      200,
    );
    const token = new URL(hostLink).hash.replace(/^#token=/, '');
    return { base: `http://127.0.0.1:${port}`, hostLink, token, output: () => output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * How long one View frame may take to answer a predicate. A predicate that reads an element (`innerText`,
 * `getAttribute`) waits for it up to Playwright's default 30 s, so an earlier View's frame without that element would
 * otherwise hold the whole search that long, once per frame: on a loaded machine past the caller's budget.
 */
const FRAME_CHECK_MS = 2_000;

/** The View's own frame (a sandbox proxy's inner `srcdoc` frame) for which `predicate` holds, among every View on the page. */
export async function viewFrameOf(page: Page, predicate: (frame: Frame) => Promise<boolean>, timeoutMs = 30_000): Promise<Frame> {
  return eventually(
    async () => {
      for (const frame of page.frames()) if (frame.url() === 'about:srcdoc' && (await holdsWithin(predicate(frame), FRAME_CHECK_MS))) return frame;
      return undefined;
    },
    timeoutMs,
    100,
  );
}

/** The check's answer if it comes within `ms`; false if it fails or is late (a late one settles unobserved). */
async function holdsWithin(check: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([check.catch(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

export function screenshotPath(name: string): string {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, `${name}.png`);
}
