import { VIEW_POLICY_DEFAULTS } from '@apphost/contracts';
import { isReplaySafe } from './replay';

describe('isReplaySafe', () => {
  const listed = { tools: ['get-time', 'search'], readOnlyHint: false };
  const hinted = { tools: [], readOnlyHint: true };

  it('is safe for a tool the classification lists by native name (exact, case-sensitive)', () => {
    expect(isReplaySafe(listed, { nativeName: 'get-time' })).toBe(true);
    expect(isReplaySafe(listed, { nativeName: 'search', annotations: { readOnlyHint: false, destructiveHint: true } })).toBe(true);
    expect(isReplaySafe(listed, { nativeName: 'Get-Time' })).toBe(false);
    expect(isReplaySafe(listed, { nativeName: 'get-time-2' })).toBe(false);
  });

  it('trusts readOnlyHint only when the profile says so, and only an exact true', () => {
    expect(isReplaySafe(hinted, { nativeName: 'x', annotations: { readOnlyHint: true } })).toBe(true);
    expect(isReplaySafe(listed, { nativeName: 'x', annotations: { readOnlyHint: true } })).toBe(false);
    for (const annotations of [undefined, null, 'readOnlyHint', [true], {}, { readOnlyHint: 'true' }, { readOnlyHint: 1 }, { readOnlyHint: false }])
      expect(isReplaySafe(hinted, { nativeName: 'x', annotations })).toBe(false);
  });

  it('is never safe under the defaults', () => {
    expect(isReplaySafe(VIEW_POLICY_DEFAULTS.replay, { nativeName: 'get-time', annotations: { readOnlyHint: true } })).toBe(false);
  });
});
