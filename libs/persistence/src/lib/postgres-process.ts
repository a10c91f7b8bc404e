import { spawn, type ChildProcess } from 'node:child_process';
import type { PersistenceLogger } from './options';
import type { RunAs } from './embedded-binaries';

const TAIL_LINES = 40;

/** A PostgreSQL program run as a child: its recent output kept for error messages, its exit observable. */
export interface PostgresProcess {
  child: ChildProcess;
  pid: number;
  /** Resolves with the exit code (or the signal name) once the process has exited. */
  exited: Promise<number | string>;
  hasExited(): boolean;
  tail(): string;
}

export function runPostgresProgram(file: string, args: string[], runAs: RunAs, logger?: PersistenceLogger): PostgresProcess {
  const child = spawn(file, args, {
    // A clean environment: inherited PG* variables (PGDATA, PGPASSWORD, ...) must not steer the server.
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' },
    // `/` is readable by the postgres user even when this process's cwd (e.g. /root) is not.
    cwd: runAs ? '/' : undefined,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a terminal's Ctrl-C (SIGINT to the foreground group) must not stop the database
    // while the services still use it; the owner stops it last (and on exit, see startEmbeddedPostgres).
    detached: true,
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
  });
  const lines: string[] = [];
  let exit: number | string | undefined;
  const onLine = (line: string): void => {
    if (!line) return;
    lines.push(line);
    if (lines.length > TAIL_LINES) lines.shift();
    // The server's log goes to this buffer; only the lines an operator must see reach the logger.
    // Rejections of our own readiness probes during boot or recovery are expected, not news.
    if (/\b(FATAL|PANIC):/.test(line) && !/the database system is (starting up|not yet accepting connections)/.test(line)) {
      logger?.warn({ component: 'embedded-postgres', line }, 'postgres reported');
    }
  };
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      parts.forEach(onLine);
    });
    stream?.on('end', () => onLine(partial));
  }
  const exited = new Promise<number | string>((resolve) => {
    child.on('error', (error) => {
      onLine(`spawn failed: ${error.message}`);
      exit = -1;
      resolve(exit);
    });
    child.on('exit', (code, signal) => {
      exit = code ?? signal ?? -1;
      resolve(exit);
    });
  });
  return { child, pid: child.pid ?? -1, exited, hasExited: () => exit !== undefined, tail: () => lines.join('\n') };
}

/** Waits at most `ms` for the process to exit; true if it did. */
export async function waitForExit(proc: PostgresProcess, ms: number): Promise<boolean> {
  if (proc.hasExited()) return true;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const result = await Promise.race([proc.exited.then(() => true as const), timedOut]);
  clearTimeout(timer);
  return result;
}
