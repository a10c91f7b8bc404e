import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

/** The layering in docs/architecture.md is enforced by lint, not by convention: these imports must be refused. */
const root = path.resolve(__dirname, '..', '..');
const run = promisify(execFile);

/** Lints `code` as if it were `filePath`, through the real ESLint CLI and the workspace's config. */
async function boundaryErrors(filePath: string, code: string): Promise<string[]> {
  const eslint = path.join(root, 'node_modules', '.bin', 'eslint');
  const linting = run(eslint, ['--stdin', '--stdin-filename', filePath, '--format', 'json'], { cwd: root, env: { ...process.env, NX_DAEMON: 'false' } });
  linting.child.stdin?.end(code);
  // ESLint exits 1 when it reports errors; the JSON report is on stdout either way.
  const { stdout } = await linting.catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '[]' }));
  const [result] = JSON.parse(stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  return result.messages.filter((m) => m.ruleId === '@nx/enforce-module-boundaries').map((m) => m.message);
}

describe('module boundaries', () => {
  jest.setTimeout(60_000);

  it('forbids an app importing another app', async () => {
    const errors = await boundaryErrors('apps/gateway/src/probe.ts', "import { lifecycleStoreService } from '../../lifecycle-store/src/service';\nexport const x = lifecycleStoreService;\n");
    expect(errors.length).toBeGreaterThan(0);
  });

  it('forbids contracts importing anything internal', async () => {
    // redact does not depend on contracts, so this is purely the tag rule (no cycle to report first).
    const errors = await boundaryErrors('libs/contracts/src/lib/probe.ts', "import { redactUrl } from '@apphost/redact';\nexport const x = redactUrl;\n");
    expect(errors.join('\n')).toMatch(/type:contracts/);
  });

  it('forbids a shared lib depending on the test harness', async () => {
    const errors = await boundaryErrors('libs/canonical-json/src/lib/probe.ts', "import { bootService } from '@apphost/testing';\nexport const x = bootService;\n");
    expect(errors.join('\n')).toMatch(/scope:shared/);
  });

  it('allows an app to use contracts and shared libs', async () => {
    const errors = await boundaryErrors(
      'apps/gateway/src/probe.ts',
      "import { BusClient } from '@apphost/bus';\nimport { AppHostError } from '@apphost/contracts';\nexport const x = [BusClient, AppHostError];\n",
    );
    expect(errors).toEqual([]);
  });
});
