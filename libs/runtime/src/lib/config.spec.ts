import { blankToUndefined, commaList, ConfigError, parseCommonConfig } from './config';

describe('common service configuration', () => {
  it('applies defaults and derives an instance id that is a single subject token', () => {
    const config = parseCommonConfig('lifecycle-store', {});
    expect(config).toMatchObject({
      HTTP_HOST: '0.0.0.0',
      HTTP_PORT: 3000,
      LOG_LEVEL: 'info',
      BUS_TIMEOUT_MS: 5000,
      SHUTDOWN_GRACE_MS: 10000,
      DATABASE_SCHEMA_PREFIX: '',
    });
    expect(config.INSTANCE_ID).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('coerces numbers from the environment and keeps a given instance id', () => {
    const config = parseCommonConfig('gateway', { HTTP_PORT: '8081', BUS_TIMEOUT_MS: '250', INSTANCE_ID: 'pod-7' });
    expect(config).toMatchObject({ HTTP_PORT: 8081, BUS_TIMEOUT_MS: 250, INSTANCE_ID: 'pod-7' });
  });

  it('treats an empty variable as unset', () => {
    expect(parseCommonConfig('gateway', { DATABASE_SCHEMA_PREFIX: '', HTTP_PORT: '', DATABASE_URL: '' })).toMatchObject({
      DATABASE_SCHEMA_PREFIX: '',
      HTTP_PORT: 3000,
    });
  });

  it('lists every problem at once, naming each variable', () => {
    const parse = () =>
      parseCommonConfig('export-audit', {
        HTTP_PORT: '70000',
        DATABASE_URL: 'mysql://x',
        LOG_LEVEL: 'loud',
        INSTANCE_ID: 'a.b',
        DATABASE_SCHEMA_PREFIX: 'Bad-Prefix',
      });
    expect(parse).toThrow(ConfigError);
    try {
      parse();
    } catch (error) {
      const problems = (error as ConfigError).problems.join('\n');
      for (const name of ['HTTP_PORT', 'DATABASE_URL', 'LOG_LEVEL', 'INSTANCE_ID', 'DATABASE_SCHEMA_PREFIX']) expect(problems).toContain(name);
      expect((error as ConfigError).message).toMatch(/^invalid configuration for export-audit/);
    }
  });
});

describe('list and blank variables', () => {
  it('a comma-separated value: trimmed, empty entries dropped, each once in first-seen order', () => {
    expect(commaList(' b, a,,b , c ,')).toEqual(['b', 'a', 'c']);
    expect(commaList('')).toEqual([]);
    expect(commaList(undefined)).toEqual([]);
  });

  it('a blank value counts as unset; anything else passes through', () => {
    expect(blankToUndefined('  ')).toBeUndefined();
    expect(blankToUndefined('x')).toBe('x');
    expect(blankToUndefined(0)).toBe(0);
  });
});
