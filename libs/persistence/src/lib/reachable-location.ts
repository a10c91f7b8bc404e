import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { AppHostError } from '@apphost/contracts';
import { assertReachable, isReachable, type PostgresBinaries, type RunAs } from './embedded-binaries';
import type { PersistenceLogger } from './options';

/**
 * Where a root process keeps what the postgres user must reach when the caller's directory is closed to it (a
 * fresh clone in a 0700 home or `mktemp -d`): root-owned, mode 0711, so others may traverse it but not list it.
 */
export const DEFAULT_REACHABLE_ROOT = '/var/lib/apphost';

/** The file beside `dataDir` that records where its data really lives, once it had to be moved. */
export function locationFile(dataDir: string): string {
  const dir = resolve(dataDir);
  return join(dirname(dir), `${basename(dir)}.location`);
}

/**
 * The data directory PostgreSQL will use for `dataDir`: the one recorded in its location file if there is one (a
 * restart finds the same data), else `dataDir` itself when PostgreSQL can reach it, else a directory of its own
 * under `root` (named by a hash of `dataDir`), recorded in the location file.
 */
export function reachableDataDir(dataDir: string, runAs: RunAs, root: string, logger?: PersistenceLogger): string {
  const requested = resolve(dataDir);
  mkdirSync(dirname(requested), { recursive: true });
  const pointer = locationFile(requested);
  if (existsSync(pointer)) {
    const recorded = (JSON.parse(readFileSync(pointer, 'utf8')) as { dataDir?: unknown }).dataDir;
    if (typeof recorded !== 'string' || !recorded.startsWith('/')) {
      throw new AppHostError('FAILED_PRECONDITION', `${pointer} does not name a data directory (expected {"dataDir": "/absolute/path"})`);
    }
    return recorded;
  }
  if (!runAs || isReachable(requested, runAs)) return requested;
  const key = createHash('sha256')
    .update(realpathSync(dirname(requested)))
    .update('\0')
    .update(basename(requested))
    .digest('hex')
    .slice(0, 16);
  const home = join(ensureRoot(root, runAs), key);
  mkdirSync(home, { recursive: true, mode: 0o711 });
  chmodSync(home, 0o711);
  const moved = join(home, basename(requested));
  writeFileSync(pointer, `${JSON.stringify({ dataDir: moved, for: requested })}\n`, { mode: 0o644 });
  logger?.info(
    { requested, dataDir: moved, locationFile: pointer },
    'the postgres user cannot reach the data directory; keeping it where it can, recorded in the location file',
  );
  return moved;
}

/**
 * The server's binaries as PostgreSQL's user can run them: the package's own when reachable, else a copy of its
 * `native` tree (binaries, libraries, share) under `root`, made once per package version.
 */
export function reachableBinaries(binaries: PostgresBinaries, runAs: RunAs, root: string, logger?: PersistenceLogger): PostgresBinaries {
  if (!runAs || (isReachable(binaries.postgres, runAs) && isReachable(binaries.initdb, runAs))) return binaries;
  const native = dirname(dirname(binaries.postgres));
  const target = join(ensureRoot(root, runAs), 'binaries', `${binaries.packageName.replace(/[^A-Za-z0-9.-]+/g, '_')}-${binaries.version}`);
  const copied = { ...binaries, postgres: join(target, 'bin', basename(binaries.postgres)), initdb: join(target, 'bin', basename(binaries.initdb)) };
  if (existsSync(copied.postgres) && existsSync(copied.initdb)) return copied;
  mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
  // Copied aside and renamed into place, so an interrupted copy is never taken for a complete one.
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
  chmodSync(partial, 0o755);
  try {
    renameSync(partial, target);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(copied.postgres)) throw error; // another process won the race: its copy serves
  }
  logger?.info({ from: native, to: target }, 'copied the PostgreSQL binaries where the postgres user can run them');
  return copied;
}

function ensureRoot(root: string, runAs: NonNullable<RunAs>): string {
  const dir = resolve(root);
  mkdirSync(dir, { recursive: true, mode: 0o711 });
  if ((statSync(dir).mode & 0o001) === 0) chmodSync(dir, statSync(dir).mode | 0o711);
  assertReachable(join(dir, 'x'), runAs); // the root's ancestors must let the postgres user through too
  return dir;
}
