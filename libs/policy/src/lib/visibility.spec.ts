import { isMalformedVisibility, normalizeVisibility } from './visibility';

describe('normalizeVisibility', () => {
  it.each<[string, unknown, string[]]>([
    ['absent', undefined, ['model', 'app']],
    ['model only', ['model'], ['model']],
    ['app only', ['app'], ['app']],
    ['both', ['app', 'model'], ['model', 'app']],
    ['duplicates', ['app', 'app', 'model'], ['model', 'app']],
    ['empty', [], []],
    ['a bare string', 'app', []],
    ['different case', ['APP'], []],
    ['a number', [1], []],
    ['a number instead of an array', 1, []],
    ['an unknown value', ['model', 'admin'], []],
    ['null', null, []],
    ['an object', { app: true }, []],
  ])('%s', (_label, raw, expected) => {
    expect(normalizeVisibility(raw)).toEqual(expected);
  });

  it('flags malformed values (to be logged) but not an explicit empty list', () => {
    expect(isMalformedVisibility('app')).toBe(true);
    expect(isMalformedVisibility(['APP'])).toBe(true);
    expect(isMalformedVisibility([])).toBe(false);
    expect(isMalformedVisibility(undefined)).toBe(false);
    expect(isMalformedVisibility(['model'])).toBe(false);
  });
});
