import { redactText, redactUrl, secretsOf } from './redact';

describe('redaction', () => {
  it('hides the password of a URL and keeps the rest', () => {
    expect(redactUrl('postgres://svc:s3cr%40t@db:5432/app')).toBe('postgres://svc:***@db:5432/app');
    expect(redactUrl('postgres://svc@db/app')).toBe('postgres://svc@db/app');
  });

  it('removes raw and decoded forms of the password from arbitrary text', () => {
    const secrets = secretsOf('postgres://svc:s3cr%40t@db/app');
    expect(secrets).toEqual(['s3cr%40t', 's3cr@t']);
    const out = redactText('failed for s3cr@t and s3cr%40t via postgresql://x:s3cr@t@h/d', secrets);
    expect(out).not.toContain('s3cr');
  });
});
