import { randomId } from './random-id';

describe('randomId', () => {
  it('hands out 16 fresh random bytes as 22 base64url chars, across pool refills', () => {
    const ids = Array.from({ length: 1000 }, () => randomId()); // the pool holds 256 ids
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => Buffer.from(id, 'base64url').length))).toEqual(new Set([16]));
  });
});
