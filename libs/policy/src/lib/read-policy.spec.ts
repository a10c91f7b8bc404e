import { AppHostError } from '@apphost/contracts';
import { admitReadRequest, checkReadResponse } from './read-policy';

const policy = { exact: ['ui://srv/widget.html'], prefixes: ['ui://srv/assets'] };
const limits = { maxItemBytes: 100, maxTotalBytes: 150 };
const item = (uri: unknown, text = 'x') => ({ uri, mimeType: 'text/html', text });

function typed(fn: () => unknown): AppHostError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppHostError) return error;
    throw error;
  }
  throw new Error('expected a typed error');
}

describe('resource-read policy', () => {
  it('admits a request only inside the policy, canonicalized', () => {
    expect(admitReadRequest(policy, 'UI://SRV/widget.html#frag')).toBe('ui://srv/widget.html');
    expect(admitReadRequest(policy, 'ui://srv/assets/a.css')).toBe('ui://srv/assets/a.css');
    for (const uri of ['ui://srv/assets-evil/a', 'ui://srv/other.html', 'ui://evil/widget.html']) {
      expect(typed(() => admitReadRequest(policy, uri))).toMatchObject({
        code: 'PERMISSION_DENIED',
        details: { reason: 'RESOURCE_POLICY_DENIED', side: 'request' },
      });
    }
    expect(typed(() => admitReadRequest(policy, 'ui://srv/assets/../secret')).code).toBe('INVALID_ARGUMENT');
  });

  it('passes a response whose every item is inside the policy, with canonical URIs', () => {
    expect(checkReadResponse(policy, [item('ui://SRV/widget.html'), item('ui://srv/assets/%61.css')], limits)).toEqual({
      contents: [item('ui://srv/widget.html'), item('ui://srv/assets/a.css')],
      totalBytes: 2,
    });
  });

  it.each([
    ['a mixed response', [item('ui://srv/widget.html'), item('file:///etc/shadow')], true],
    ['an item outside', [item('ui://srv/assets-evil/x')], false],
    ['an item without a URI', [{ text: 'x' }], false],
    ['an item with a dot segment', [item('ui://srv/assets/%2e%2e/x')], false],
    ['an encoded slash splice', [item('ui://srv/assets%2F..%2Fsecret')], false],
  ])('rejects %s whole', (_label, contents, mixed) => {
    expect(typed(() => checkReadResponse(policy, contents as Record<string, unknown>[], limits))).toMatchObject({
      code: 'PERMISSION_DENIED',
      details: { reason: 'RESOURCE_POLICY_DENIED', side: 'response', mixed },
    });
  });

  it('enforces per-item and aggregate byte limits (text and base64 blobs)', () => {
    expect(typed(() => checkReadResponse(policy, [item('ui://srv/widget.html', 'y'.repeat(101))], limits))).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      details: { reason: 'READ_ITEM_TOO_LARGE' },
    });
    const blob = { uri: 'ui://srv/assets/b', blob: Buffer.alloc(90).toString('base64') };
    expect(typed(() => checkReadResponse(policy, [blob, blob], limits))).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      details: { reason: 'READ_TOTAL_TOO_LARGE' },
    });
    expect(checkReadResponse(policy, [blob], limits).totalBytes).toBe(90);
  });

  it('counts a text held by reference at its text length (not its literal), and refuses a malformed reference', () => {
    const referenced = (textBytes: number) => ({
      uri: 'ui://srv/widget.html',
      mimeType: 'text/html',
      textBytes,
      textLiteralReference: {
        transferId: '3b241101-e2bb-4255-8caf-4136c566a962',
        totalBytes: textBytes + 10,
        chunkBytes: 524288,
        sha256: 'a'.repeat(64),
        subject: 'apphost.binding-registry.transfer.reg-1.0123456789ab.read-chunk.v1',
      },
    });
    expect(checkReadResponse(policy, [referenced(80)], limits)).toEqual({ contents: [referenced(80)], totalBytes: 80 });
    expect(typed(() => checkReadResponse(policy, [referenced(101)], limits))).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      details: { reason: 'READ_ITEM_TOO_LARGE' },
    });
    expect(typed(() => checkReadResponse(policy, [{ ...referenced(80), textLiteralReference: { totalBytes: 80 } }], limits)).code).toBe('INTERNAL');
    // A text longer than its literal, a length that is not a count, none at all: the owner answered what it must not.
    for (const textBytes of [89, -1, 2.5, undefined])
      expect(typed(() => checkReadResponse(policy, [{ ...referenced(80), textBytes }], limits)).code).toBe('INTERNAL');
  });
});
