import { ConfigError, loadServiceConfig, type ServiceDefinition } from '@apphost/runtime';
import { spawnTs, waitForExit } from './processes';

/** Settings a standalone service needs to get past its checks (nothing is contacted before config is valid). */
const STANDALONE_BASE = {
  NATS_URL: 'nats://127.0.0.1:1',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
  REDIS_URL: 'redis://127.0.0.1:1',
  AUTH_MODE: 'development',
};

/**
 * The one config check every service runs: each bad value alone is refused naming its variable, and the real
 * entry point given all of them at once exits 2 listing every one, before it connects to anything.
 */
export function describeServiceConfig<C extends object>(
  definition: ServiceDefinition<C>,
  entry: string,
  badValues: Record<string, string>,
  base: Record<string, string> = {},
): void {
  describe(`${definition.name} configuration`, () => {
    const env = { ...STANDALONE_BASE, ...base };

    it('accepts the defaults', () => {
      expect(() => loadServiceConfig(definition, env, true)).not.toThrow();
    });

    it.each(Object.entries(badValues))('refuses a bad %s, naming it', (name, value) => {
      let thrown: unknown;
      try {
        loadServiceConfig(definition, { ...env, [name]: value }, true);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as ConfigError).problems.some((p) => named(p, name))).toBe(true);
    });

    it('exits 2 from its entry point, listing every bad variable', async () => {
      const result = await waitForExit(spawnTs(entry, { ...env, ...badValues }), 30_000);
      expect(result.code).toBe(2);
      for (const name of Object.keys(badValues)) expect(result.stderr.split('\n').some((line) => named(line.replace(/^\s*- /, ''), name))).toBe(true);
      expect(result.stderr).not.toMatch(/\n\s+at /); // a listed problem, not a stack trace
    }, 40_000);
  });
}

/** The variables a service's own schema reads (an object schema, or one piped into a transform). */
export function variablesOf(schema: unknown): string[] {
  const def = (schema as { def?: { type?: string; in?: unknown; shape?: Record<string, unknown> } }).def;
  if (def?.type === 'pipe') return variablesOf(def.in);
  if (def?.type === 'object' && def.shape) return Object.keys(def.shape).sort();
  throw new Error('variablesOf: not an object schema');
}

/** A problem line names the variable itself (`NAME: …`) or a part of its value (`NAME.0: …`). */
function named(problem: string, name: string): boolean {
  return problem.startsWith(`${name}:`) || problem.startsWith(`${name}.`);
}
