import { AppHostError } from '@apphost/contracts';
import { ArgumentSchemas } from './argument-schemas';

const reasonOf = (f: () => void): unknown => {
  try {
    f();
  } catch (error) {
    return error instanceof AppHostError ? { code: error.code, reason: error.details?.['reason'], issues: error.details?.['issues'] } : error;
  }
  return 'passed';
};

describe('ArgumentSchemas (tool inputSchema admission, ajv 2020-12)', () => {
  const schemas = new ArgumentSchemas(2);
  const schema = { type: 'object', properties: { n: { type: 'integer' }, at: { type: 'string', format: 'date-time' } }, required: ['n'] };

  it('accepts matching arguments and refuses others with their paths (never their values)', () => {
    expect(reasonOf(() => schemas.check('t', schema, { n: 1, at: '2026-01-01T00:00:00Z' }))).toBe('passed');
    expect(reasonOf(() => schemas.check('t', schema, { n: 'secret-value' }))).toEqual({
      code: 'INVALID_ARGUMENT',
      reason: 'TOOL_ARGUMENTS_INVALID',
      issues: [{ path: '/n', message: 'must be integer' }],
    });
    expect(JSON.stringify(reasonOf(() => schemas.check('t', schema, { n: 'secret-value' })))).not.toContain('secret-value');
    expect(reasonOf(() => schemas.check('t', schema, { n: 1, at: 'yesterday' }))).toMatchObject({ reason: 'TOOL_ARGUMENTS_INVALID' });
  });

  it('compiles the draft-07 schemas SDKs emit; a tool without a schema takes any object', () => {
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false };
    expect(reasonOf(() => schemas.check('t', draft7, { q: 'x' }))).toBe('passed');
    expect(reasonOf(() => schemas.check('t', draft7, { other: 1 }))).toMatchObject({ reason: 'TOOL_ARGUMENTS_INVALID' });
    expect(reasonOf(() => schemas.check('t', undefined, { anything: true }))).toBe('passed');
  });

  it('fails closed on a schema that does not compile or names an unknown meta-schema', () => {
    expect(reasonOf(() => schemas.check('t', { type: 'no-such-type' }, {}))).toMatchObject({
      reason: 'TOOL_ARGUMENTS_INVALID',
      issues: [{ path: '(schema)', message: 'the input schema does not compile' }],
    });
    expect(reasonOf(() => schemas.check('t', { $schema: 'https://example.com/my-meta', type: 'object' }, {}))).toMatchObject({
      reason: 'TOOL_ARGUMENTS_INVALID',
    });
    expect(reasonOf(() => schemas.check('t', 'not a schema', {}))).toMatchObject({ reason: 'TOOL_ARGUMENTS_INVALID' });
  });

  it('keeps a bounded cache: evicted schemas compile again, with the same verdict', () => {
    const small = new ArgumentSchemas(1);
    const a = { type: 'object', required: ['a'] };
    const b = { type: 'object', required: ['b'] };
    for (let i = 0; i < 3; i++) {
      expect(reasonOf(() => small.check('a', a, { a: 1 }))).toBe('passed');
      expect(reasonOf(() => small.check('b', b, { a: 1 }))).toMatchObject({ reason: 'TOOL_ARGUMENTS_INVALID' });
    }
  });

  it('the bound holds in ajv too: an evicted schema is removed from it, and one with an $id compiles again', () => {
    const small = new ArgumentSchemas(2);
    const ajvCache = (small as unknown as { ajv: { _cache: Map<unknown, unknown> } }).ajv._cache;
    const baseline = ajvCache.size; // the meta-schemas
    // A root `$id` (never registered) and a nested one, as servers emit them, evicted and compiled again.
    const withIds = (type: string) => ({
      $id: 'https://tools.example/input',
      type: 'object',
      properties: { a: { $ref: 'urn:item' } },
      $defs: { item: { $id: 'urn:item', type } },
    });
    for (let i = 0; i < 50; i++) {
      expect(reasonOf(() => small.check('s', withIds('string'), { a: 'x' }))).toBe('passed');
      expect(reasonOf(() => small.check('n', withIds('number'), { a: 'x' }))).toMatchObject({ reason: 'TOOL_ARGUMENTS_INVALID' });
      expect(reasonOf(() => small.check('t', { type: 'object', required: [`k${i}`] }, { [`k${i}`]: 1 }))).toBe('passed');
    }
    expect(ajvCache.size).toBeLessThanOrEqual(baseline + 2);
  });
});
