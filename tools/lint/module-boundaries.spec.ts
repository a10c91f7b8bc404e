import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

/** The layering in docs/architecture.md is enforced by lint, not by convention: these imports must be refused. */
const root = path.resolve(__dirname, '..', '..');
const run = promisify(execFile);

/** The project folder that holds `filePath` (the nearest folder with an eslint.config.cjs below the root). */
function projectDir(filePath: string): string {
  const [top, name] = filePath.split('/');
  return top === 'apps' || top === 'libs' ? path.join(root, top, name) : path.join(root, top);
}

/**
 * Lints `code` as if it were `filePath`, through the real ESLint CLI run the way `nx lint <project>` runs it
 * (from the project's folder, with its eslint.config.cjs); the messages of `rule`.
 */
async function ruleErrors(rule: string, filePath: string, code: string): Promise<string[]> {
  const eslint = path.join(root, 'node_modules', '.bin', 'eslint');
  const cwd = projectDir(filePath);
  const linting = run(eslint, ['--stdin', '--stdin-filename', path.relative(cwd, path.join(root, filePath)), '--format', 'json'], {
    cwd,
    env: { ...process.env, NX_DAEMON: 'false' },
  });
  linting.child.stdin?.end(code);
  // ESLint exits 1 when it reports errors; the JSON report is on stdout either way.
  const { stdout } = await linting.catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '[]' }));
  const [result] = JSON.parse(stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  return result.messages.filter((m) => m.ruleId === rule).map((m) => m.message);
}

const boundaryErrors = (filePath: string, code: string) => ruleErrors('@nx/enforce-module-boundaries', filePath, code);
const testingImportErrors = (filePath: string) =>
  ruleErrors('no-restricted-imports', filePath, "import { bootService } from '@apphost/testing';\nexport const x = bootService;\n");

describe('module boundaries', () => {
  jest.setTimeout(60_000);

  it('forbids an app importing another app', async () => {
    const errors = await boundaryErrors(
      'apps/gateway/src/probe.ts',
      "import { lifecycleStoreService } from '../../lifecycle-store/src/service';\nexport const x = lifecycleStoreService;\n",
    );
    expect(errors.length).toBeGreaterThan(0);
  });

  it('forbids contracts importing anything internal', async () => {
    // redact does not depend on contracts, so this is purely the tag rule (no cycle to report first).
    const errors = await boundaryErrors('libs/contracts/src/lib/probe.ts', "import { redactUrl } from '@apphost/redact';\nexport const x = redactUrl;\n");
    expect(errors.join('\n')).toMatch(/type:contracts/);
  });

  it('forbids a shared lib depending on the test harness', async () => {
    // The test kit does not depend on sealed-results (it does, through mcp and policy, on canonical-json), so this is
    // purely the tag rule (no cycle to report first).
    const errors = await boundaryErrors(
      'libs/sealed-results/src/lib/probe.ts',
      "import { bootService } from '@apphost/testing';\nexport const x = bootService;\n",
    );
    expect(errors.join('\n')).toMatch(/scope:shared/);
  });

  it('allows an app to use contracts and shared libs', async () => {
    const errors = await boundaryErrors(
      'apps/gateway/src/probe.ts',
      "import { BusClient } from '@apphost/bus';\nimport { AppHostError } from '@apphost/contracts';\nexport const x = [BusClient, AppHostError];\n",
    );
    expect(errors).toEqual([]);
  });

  it('lets the tools project compose apps through their service definitions, and refuses that to apps and libs', async () => {
    const code = "import { gatewayService } from '@apphost/app-gateway';\nexport const x = gatewayService;\n";
    expect(await boundaryErrors('tools/plane/probe.ts', code)).toEqual([]);
    expect((await boundaryErrors('apps/lifecycle-store/src/probe.ts', code)).join('\n')).toMatch(/Imports of apps are forbidden/);
    // A lib the app depends on reports the cycle first; either way the import is refused.
    expect(await boundaryErrors('libs/runtime/src/lib/probe.ts', code)).not.toEqual([]);
  });

  it('refuses the test kit in shipped code: app sources, lib sources, the plane itself', async () => {
    for (const file of ['apps/gateway/src/probe.ts', 'libs/runtime/src/lib/probe.ts', 'tools/plane/plane-probe.ts']) {
      expect({ file, errors: (await testingImportErrors(file)).join('\n') }).toEqual({
        file,
        errors: expect.stringMatching(/@apphost\/testing is for spec, test-support and bench files only/),
      });
    }
  });

  it('allows the test kit in specs, test-support folders, benchmarks and the plane harnesses', async () => {
    for (const file of [
      'apps/gateway/src/probe.spec.ts',
      'apps/governed-operations/src/test/probe.ts',
      'apps/lifecycle-store/src/testing/probe.ts',
      'tools/bench/probe.ts',
      'tools/plane/probe-harness.ts',
      'tools/plane/plane-process.ts',
    ]) {
      expect({ file, errors: await testingImportErrors(file) }).toEqual({ file, errors: [] });
    }
  }, 120_000);
});
