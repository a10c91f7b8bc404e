import { errorInWords } from './words';

describe('errorInWords', () => {
  it('prefers the reason, keeping the server message and reason for the record', () => {
    expect(errorInWords(400, { error: { code: 'FAILED_PRECONDITION', message: 'view revoked', details: { reason: 'VIEW_REVOKED' } } })).toBe(
      'This View is no longer live (its session, toolset or sign-in changed, or it was closed). (view revoked — VIEW_REVOKED)',
    );
  });

  it('falls back to the code, then to a generic sentence', () => {
    expect(errorInWords(401, { error: { code: 'UNAUTHENTICATED', message: 'bad token' } })).toMatch(/^You are not signed in.*\(bad token — UNAUTHENTICATED\)$/);
    expect(errorInWords(500, { error: { code: 'SOMETHING_NEW' } })).toBe('The request failed. (SOMETHING_NEW)');
  });

  it('says when AppHost could not be reached or answered without an envelope', () => {
    expect(errorInWords(0, undefined)).toBe('AppHost could not be reached.');
    expect(errorInWords(502, undefined)).toBe('The request failed (HTTP 502).');
  });
});
