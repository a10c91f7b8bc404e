import { expectAppError } from '@apphost/testing';
import { admitArguments } from './argument-admission';

// Non-finite numbers never survive the bus codec (JSON), so they are checked here, on the function itself.
describe('admitArguments', () => {
  it.each([
    ['NaN', { n: Number.NaN }],
    ['Infinity (what JSON.parse makes of 1e400)', JSON.parse('{"n": 1e400}') as Record<string, unknown>],
    ['-Infinity', { n: [-Infinity] }],
  ])('%s: INVALID_ARGUMENT (ARGUMENTS_NOT_CANONICAL) naming the call and the path', async (_what, args) => {
    const error = await expectAppError(
      () => admitArguments([{ functionCallId: 'a', arguments: {} }, { arguments: args }]),
      'INVALID_ARGUMENT',
      'ARGUMENTS_NOT_CANONICAL',
    );
    expect(error.details).toMatchObject({ index: 1, canonical: { reason: 'non-finite-number' } });
    expect(error.details).not.toHaveProperty('functionCallId');
  });

  it('admits canonical arguments at the limits', () => {
    expect(() => admitArguments([{ arguments: { s: '\ud83d\ude00', n: 2 ** 53 - 1, nested: { a: [1, { b: null }] } } }])).not.toThrow();
  });
});
