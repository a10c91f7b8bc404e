import { createServer } from 'node:net';
import { McpConnection, type OpenConnectionOptions } from './connection';
import { STDERR_LINE_MAX_CHARS } from './stdio-diagnostics';
import { typedRejection } from './test-targets';
import type { McpTarget } from './target';

jest.setTimeout(20_000);

const open = (target: McpTarget, extra: Partial<OpenConnectionOptions> = {}) =>
  typedRejection(McpConnection.open({ target, toolsetId: 'ts-broken', connectionClass: 'app-safe', advertiseUi: false, connectTimeoutMs: 5_000, ...extra }));

const node = (script: string): McpTarget => ({ kind: 'stdio', command: process.execPath, args: ['-e', script] });

/** A loopback port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('McpConnection.open: a connection that never initializes says why, naming the toolset', () => {
  it('a stdio command that does not exist: ENOENT with the command', async () => {
    const error = await open({ kind: 'stdio', command: '/nonexistent/mcp-server-binary', args: ['--secret-flag'] });
    expect(error).toMatchObject({
      code: 'UNAVAILABLE',
      details: { reason: 'MCP_CONNECT_FAILED', cause: 'SPAWN_FAILED', errno: 'ENOENT', toolsetId: 'ts-broken' },
    });
    expect(error.message).toBe('toolset ts-broken: connect failed: command not found: /nonexistent/mcp-server-binary (ENOENT)');
  });

  it('a server that exits before initialize: its exit code and last non-empty stderr line', async () => {
    const error = await open(node("console.error('starting'); console.error('boom: bad config'); console.error(''); process.exit(3)"));
    expect(error).toMatchObject({ code: 'UNAVAILABLE', details: { reason: 'MCP_CONNECT_FAILED', cause: 'PROCESS_EXITED', exitCode: 3, signal: null } });
    expect(error.message).toBe('toolset ts-broken: connect failed: the server exited with code 3 before initialize; last stderr line: boom: bad config');
  });

  it('a server killed by a signal, with a huge stderr line: the signal, and the line bounded', async () => {
    const error = await open(node(`process.stderr.write('x'.repeat(100000) + '\\n', () => process.kill(process.pid, 'SIGKILL'))`));
    expect(error.details).toMatchObject({ cause: 'PROCESS_EXITED', exitCode: null, signal: 'SIGKILL' });
    expect(error.message).toContain('was killed by SIGKILL before initialize');
    expect(error.message.length).toBeLessThan(STDERR_LINE_MAX_CHARS + 200);
  });

  it('a server that never answers initialize: DEADLINE_EXCEEDED after the connect timeout', async () => {
    // Reads stdin and never answers; it ends with its stdin, as the close after the failure ends it.
    const error = await open(node("process.stdin.on('end', () => process.exit(0)).resume()"), { connectTimeoutMs: 300 });
    expect(error).toMatchObject({ code: 'DEADLINE_EXCEEDED', details: { reason: 'MCP_CONNECT_FAILED', cause: 'TIMEOUT' } });
    expect(error.message).toBe('toolset ts-broken: connect failed: no initialize answer within 300ms');
  });

  it('a Streamable HTTP server on a closed port: ECONNREFUSED with host:port', async () => {
    const port = await closedPort();
    const error = await open({ kind: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: { authorization: 'Bearer never-logged' } });
    expect(error).toMatchObject({ code: 'UNAVAILABLE', details: { reason: 'MCP_CONNECT_FAILED', cause: 'NETWORK_ERROR', errno: 'ECONNREFUSED' } });
    expect(error.message).toBe(`toolset ts-broken: connect failed: connection refused by 127.0.0.1:${port} (ECONNREFUSED)`);
    expect(error.message).not.toContain('never-logged');
  });
});
