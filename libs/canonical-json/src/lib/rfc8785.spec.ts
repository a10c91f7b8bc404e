import { canonicalize } from './canonicalize';
import { doubleFromBits, expectCanonicalError } from './test-helpers';

describe('RFC 8785 golden vectors', () => {
  // §3.2.2. Its 1E30 is an integer value above 2^53 − 1, which this I-JSON profile refuses, so the sample is
  // checked twice: as published (rejected at that element) and without that one element (exact RFC output).
  const sample = () => ({
    // The RFC's literal deliberately has more digits than a double holds.
    // eslint-disable-next-line no-loss-of-precision
    numbers: [333333333.33333329, 1e30, 4.5, 2e-3, 0.000000000000000000000000001],
    string: '\u20ac$\u000f\nA\'B"\\\\"/',
    literals: [null, true, false],
  });

  it('rejects the §3.2.2 sample as published because 1E30 is an unsafe integer', () => {
    expectCanonicalError(() => canonicalize(sample()), { reason: 'unsafe-integer', path: '/numbers/1' });
  });

  it('produces the §3.2.2 output for the sample minus 1E30', () => {
    const input = sample();
    input.numbers.splice(1, 1);
    // Written as raw text so every escape is visible: the RFC output is
    // {"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}
    const expected = String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`;
    expect(canonicalize(input)).toBe(expected);
  });

  it('sorts §3.2.3 keys by UTF-16 code units (the emoji surrogate pair sorts before U+FB33)', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    expect(canonicalize(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  // Appendix B, plus the largest safe integers. Expected strings are the RFC's column.
  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'], // -0
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['433fffffffffffff', '9007199254740991'],
    ['c33fffffffffffff', '-9007199254740991'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('number with bits %s canonicalizes to %s', (bits, expected) => {
    expect(canonicalize(doubleFromBits(bits))).toBe(expected);
  });

  // Appendix B values that are integer-valued doubles beyond ±(2^53 − 1): valid JCS, but not I-JSON.
  it.each([
    ['7fefffffffffffff'], // 1.7976931348623157e+308
    ['ffefffffffffffff'], // -1.7976931348623157e+308
    ['4340000000000000'], // 9007199254740992
    ['c340000000000000'], // -9007199254740992
    ['4430000000000000'], // 295147905179352830000 (~2^68)
    ['44b52d02c7e14af5'], // 9.999999999999997e+22
    ['44b52d02c7e14af6'], // 1e+23
    ['44b52d02c7e14af7'], // 1.0000000000000001e+23
    ['444b1ae4d6e2ef4e'], // 999999999999999700000
    ['444b1ae4d6e2ef4f'], // 999999999999999900000
    ['444b1ae4d6e2ef50'], // 1e+21
  ])('number with bits %s is rejected as an unsafe integer', (bits) => {
    expectCanonicalError(() => canonicalize([doubleFromBits(bits)]), { reason: 'unsafe-integer', path: '/0' });
  });

  it.each([['7fffffffffffffff'], ['7ff0000000000000'], ['fff0000000000000']])('number with bits %s (NaN / ±Infinity) is rejected as non-finite', (bits) => {
    expectCanonicalError(() => canonicalize({ n: doubleFromBits(bits) }), { reason: 'non-finite-number', path: '/n' });
  });
});
