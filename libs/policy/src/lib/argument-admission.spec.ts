import { AppHostError } from '@apphost/contracts';
import { admitArguments } from './argument-admission';

// Non-finite numbers never survive the bus codec (JSON), so they are checked here, on the function itself.
describe('admitArguments', () => {
  it.each([
    ['NaN', { n: Number.NaN }],
    ['Infinity (what JSON.parse makes of 1e400)', JSON.parse('{"n": 1e400}') as Record<string, unknown>],
    ['-Infinity', { n: [-Infinity] }],
  ])('%s: INVALID_ARGUMENT (ARGUMENTS_NOT_CANONICAL) naming the call and the path', (_what, args) => {
    // Shared libraries cannot use the test kit's expectAppError (the kit depends on them).
    let error: unknown;
    try {
      admitArguments([{ functionCallId: 'a', arguments: {} }, { arguments: args }]);
    } catch (caught) {
      error = caught;
    }
    if (!(error instanceof AppHostError)) throw new Error(`expected an AppHostError, got ${String(error)}`);
    expect({ code: error.code, reason: error.details?.['reason'] }).toEqual({ code: 'INVALID_ARGUMENT', reason: 'ARGUMENTS_NOT_CANONICAL' });
    expect(error.details).toMatchObject({ index: 1, canonical: { reason: 'non-finite-number' } });
    expect(error.details).not.toHaveProperty('functionCallId');
  });

  it('admits canonical arguments at the limits', () => {
    expect(() => admitArguments([{ arguments: { s: '\ud83d\ude00', n: 2 ** 53 - 1, nested: { a: [1, { b: null }] } } }])).not.toThrow();
  });
});
