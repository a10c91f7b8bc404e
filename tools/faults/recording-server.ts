/**
 * A stdio MCP server whose one tool, `record`, appends its `key` (the caller's invocation/call id) to the file named
 * by `--record=<path>` before it answers, after `delayMs`: the fault suite counts executions per call id from it.
 *
 * Run: node -r ./tools/register.cjs tools/faults/recording-server.ts --record=/tmp/executions.log
 */
import fs from 'node:fs';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const recordArg = process.argv.find((a) => a.startsWith('--record='))?.slice('--record='.length);
if (!recordArg) {
  process.stderr.write('recording-server: --record=<path> is required\n');
  process.exit(2);
}
const recordFile: string = recordArg;

function build(): McpServer {
  const server = new McpServer({ name: 'apphost-fault-recorder', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'record',
    {
      description: 'Records one execution of a call id.',
      inputSchema: z.object({ key: z.string().min(1).max(200), delayMs: z.number().int().min(0).max(10_000).optional() }),
    },
    async ({ key, delayMs }) => {
      // Recorded first: an execution counts even if the caller never sees its answer.
      fs.appendFileSync(recordFile, `${key}\n`);
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      return { content: [{ type: 'text' as const, text: `recorded ${key}` }] };
    },
  );
  return server;
}

const handle = serveStdio(build, { onerror: (error) => process.stderr.write(`[recording-server] ${error.message}\n`) });
const stop = () => void handle.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
