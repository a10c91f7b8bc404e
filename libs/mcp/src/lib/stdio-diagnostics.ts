import type { ChildProcess } from 'node:child_process';
import type { Stream } from 'node:stream';
import type { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/** The longest stderr line a connect error quotes: enough to name the cause, never a whole dump. */
export const STDERR_LINE_MAX_CHARS = 240;

/** How a stdio server process ended, when it did. */
export interface ProcessExit {
  code: number | null;
  signal: string | null;
}

/**
 * What a stdio server said and did while it started: its last non-empty stderr line (bounded) and its exit status.
 * The stderr pipe is drained continuously, so a chatty server never blocks on a full pipe; only the last line is kept.
 */
export class StdioDiagnostics {
  private partial = '';
  private lastLine: string | undefined;
  exit: ProcessExit | undefined;

  constructor(transport: StdioClientTransport) {
    (transport.stderr as Stream | null)?.on('data', (chunk: Buffer | string) => this.take(String(chunk)));
    // The SDK does not expose the child's exit status; its process is read once, right after spawn.
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      const child = (transport as unknown as { _process?: ChildProcess })._process;
      child?.once('exit', (code, signal) => (this.exit = { code, signal }));
    };
  }

  get lastStderrLine(): string | undefined {
    const pending = this.partial.trim();
    return pending ? bounded(pending) : this.lastLine;
  }

  private take(text: string): void {
    const lines = (this.partial + text).split(/\r?\n/);
    this.partial = (lines.pop() ?? '').slice(-STDERR_LINE_MAX_CHARS * 4);
    for (const line of lines) if (line.trim()) this.lastLine = bounded(line.trim());
  }
}

function bounded(line: string): string {
  return line.length > STDERR_LINE_MAX_CHARS ? `${line.slice(0, STDERR_LINE_MAX_CHARS)}…` : line;
}
