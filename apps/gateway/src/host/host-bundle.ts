import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The reference web host's project (its browser sources), found from this file: the gateway serves what it builds. */
export const HOST_WEB_ROOT = path.resolve(__dirname, '..', '..', '..', 'host-web');

/** The files the gateway serves under `/host/` and the sandbox origin. */
export interface HostAssets {
  /** The host page (`/host/`). */
  indexHtml: string;
  /** The host page's script (`/host/app.js`). */
  appJs: string;
  /** The sandbox proxy's script (`/sandbox/proxy.js` on the sandbox origin). */
  proxyJs: string;
  /** The stamp of the sources they were built from. */
  stamp: string;
}

const ENTRIES = { app: 'src/main.ts', proxy: 'src/sandbox-proxy.ts' } as const;

/**
 * Builds the host page and the sandbox proxy with esbuild on first use, into `<root>/dist`, keyed by a digest of
 * the sources and of the bundled packages' versions: a fresh checkout needs no build step before `npm start`, an
 * unchanged tree reuses the cache (one stat and a digest of a few files), and a changed one is rebuilt (~0.3 s). A
 * production image ships `dist` prebuilt (esbuild is a development dependency), so there the cache is used as is.
 */
export async function loadHostAssets(root: string = HOST_WEB_ROOT): Promise<HostAssets> {
  const dist = path.join(root, 'dist');
  const stamp = sourceStamp(root);
  const stampFile = path.join(dist, 'stamp');
  const cached = fs.existsSync(stampFile) ? fs.readFileSync(stampFile, 'utf8') : undefined;
  if (cached !== stamp) {
    const esbuild = loadEsbuild();
    if (esbuild) await build(esbuild, root, dist, stamp);
    else if (cached === undefined) throw new Error(`the host page is not built (${dist}) and esbuild is not installed to build it`);
  }
  const read = (name: string) => fs.readFileSync(path.join(dist, name), 'utf8');
  return { indexHtml: read('index.html'), appJs: read('app.js'), proxyJs: read('proxy.js'), stamp: read('stamp') };
}

async function build(esbuild: typeof import('esbuild'), root: string, dist: string, stamp: string): Promise<void> {
  // Built beside the cache and renamed over it, so a concurrent start never serves half a bundle.
  const staging = `${dist}.${process.pid}.tmp`;
  fs.rmSync(staging, { recursive: true, force: true });
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: ENTRIES,
    outdir: staging,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  fs.copyFileSync(path.join(root, 'src', 'index.html'), path.join(staging, 'index.html'));
  fs.writeFileSync(path.join(staging, 'stamp'), stamp);
  fs.rmSync(dist, { recursive: true, force: true });
  try {
    fs.renameSync(staging, dist);
  } catch (error) {
    // Another gateway starting at the same time renamed its build first: the same sources, so keep that one.
    fs.rmSync(staging, { recursive: true, force: true });
    if (!fs.existsSync(path.join(dist, 'stamp')) || fs.readFileSync(path.join(dist, 'stamp'), 'utf8') !== stamp) throw error;
  }
}

/** A digest of every source file and the versions of esbuild and the bundled MCP Apps SDK. */
function sourceStamp(root: string): string {
  const hash = createHash('sha256');
  for (const file of listFiles(path.join(root, 'src')).sort()) {
    hash.update(path.relative(root, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  for (const pkg of ['esbuild', '@modelcontextprotocol/ext-apps']) hash.update(`${pkg}@${packageVersion(root, pkg)}\0`);
  return hash.digest('hex');
}

function listFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return listFiles(full);
    return entry.name.endsWith('.spec.ts') ? [] : [full];
  });
}

/** From the repository's node_modules (the SDK's `exports` do not expose its package.json). */
function packageVersion(root: string, name: string): string {
  try {
    const file = path.join(root, '..', '..', 'node_modules', ...name.split('/'), 'package.json');
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'absent';
  }
}

function loadEsbuild(): typeof import('esbuild') | undefined {
  try {
    // Optional: a production image has no esbuild (it serves the bundle built into the image).
    return require('esbuild') as typeof import('esbuild');
  } catch {
    return undefined;
  }
}
