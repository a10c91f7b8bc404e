import { takeTokenFromHash } from './token';

describe('takeTokenFromHash', () => {
  it('takes the token and keeps the rest of the fragment', () => {
    expect(takeTokenFromHash('#token=abc.def&app=demo')).toEqual({ token: 'abc.def', rest: '#app=demo' });
  });

  it('leaves an empty fragment when the token was all of it', () => {
    expect(takeTokenFromHash('#token=abc')).toEqual({ token: 'abc', rest: '' });
  });

  it('finds no token in an empty, token-less or blank fragment', () => {
    expect(takeTokenFromHash('')).toEqual({ token: undefined, rest: '' });
    expect(takeTokenFromHash('#app=demo')).toEqual({ token: undefined, rest: '#app=demo' });
    expect(takeTokenFromHash('#token=%20')).toEqual({ token: undefined, rest: '' });
  });
});
