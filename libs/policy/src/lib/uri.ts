import { domainToASCII } from 'node:url';
import { AppHostError } from '@apphost/contracts';

/** Why a URI was refused; carried in `details.reason`. */
export type UriRejection =
  | 'malformed'
  | 'unsupported-scheme'
  | 'missing-authority'
  | 'userinfo'
  | 'invalid-host'
  | 'invalid-port'
  | 'invalid-escape'
  | 'dot-segment'
  | 'invalid-character';

export class UriPolicyError extends AppHostError {
  constructor(
    readonly reason: UriRejection,
    message: string,
  ) {
    super('INVALID_ARGUMENT', message, { details: { reason } });
  }
}

/** Per-scheme rules: the plug-in point for new schemes. */
export interface SchemeRules {
  defaultPort?: number;
  /** An empty path is written as `/` (http-like schemes, where the two are the same resource). */
  emptyPathIsSlash?: boolean;
}

const SCHEMES = new Map<string, SchemeRules>([
  ['ui', {}],
  ['https', { defaultPort: 443, emptyPathIsSlash: true }],
  ['http', { defaultPort: 80, emptyPathIsSlash: true }],
]);

export function registerUriScheme(scheme: string, rules: SchemeRules): void {
  if (!/^[a-z][a-z0-9+.-]*$/.test(scheme)) throw new Error(`invalid scheme name "${scheme}"`);
  SCHEMES.set(scheme, rules);
}

// RFC 3986 appendix B, with the authority required: every scheme we host is hierarchical.
const URI_PATTERN = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/;
const UNRESERVED = /[A-Za-z0-9\-._~]/;
// Characters allowed unescaped in a path segment besides unreserved: sub-delims, ':' and '@' (RFC 3986 pchar).
const PATH_SAFE = /[A-Za-z0-9\-._~!$&'()*+,;=:@]/;

/**
 * The one URI canonicalization used everywhere (policy matching, returned items, operation identity, descriptor
 * and bootstrap comparison): lowercase scheme and host, IDNA to ASCII, default port removed, escapes of unreserved
 * characters decoded and all other escapes uppercased, dot segments (also percent-encoded) rejected, fragment
 * stripped, query kept exactly. Userinfo is rejected. Idempotent: canonicalizeUri(canonicalizeUri(x)) === canonicalizeUri(x).
 */
export function canonicalizeUri(uri: string): string {
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > 8192)
    throw new UriPolicyError('malformed', 'URI must be a non-empty string of at most 8192 characters');
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this rejects
  if (/[\u0000-\u0020\u007f\\]/.test(uri)) throw new UriPolicyError('invalid-character', 'URI contains whitespace, control characters or a backslash');
  const match = URI_PATTERN.exec(uri);
  if (!match) throw new UriPolicyError(uri.includes('://') ? 'malformed' : 'missing-authority', 'URI must have the form scheme://authority/path');
  const [, rawScheme, authority, rawPath, query = ''] = match;
  const scheme = rawScheme.toLowerCase();
  const rules = SCHEMES.get(scheme);
  if (!rules) throw new UriPolicyError('unsupported-scheme', `URI scheme "${scheme}" is not supported`);
  const path = canonicalPath(rawPath);
  return `${scheme}://${canonicalAuthority(authority, rules)}${path === '' && rules.emptyPathIsSlash ? '/' : path}${checkQuery(query)}`;
}

function canonicalAuthority(authority: string, rules: SchemeRules): string {
  if (authority.includes('@')) throw new UriPolicyError('userinfo', 'URI userinfo is not allowed');
  if (authority.includes('%')) throw new UriPolicyError('invalid-host', 'percent-encoding is not allowed in a URI host');
  const hostPort = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]*)(?::(\d*))?$/.exec(authority);
  if (!hostPort) throw new UriPolicyError('invalid-host', 'URI authority is malformed');
  const [, rawHost, rawPort] = hostPort;
  if (rawHost === '') throw new UriPolicyError('missing-authority', 'URI host is empty');
  const host = rawHost.startsWith('[') ? rawHost.toLowerCase() : domainToASCII(rawHost.toLowerCase());
  if (host === '') throw new UriPolicyError('invalid-host', 'URI host is not a valid domain name');
  if (rawPort === undefined || rawPort === '') return host;
  const port = Number(rawPort);
  if (!Number.isInteger(port) || port > 65535 || rawPort.length > 5) throw new UriPolicyError('invalid-port', 'URI port is out of range');
  return port === rules.defaultPort ? host : `${host}:${port}`;
}

function canonicalPath(rawPath: string): string {
  const segments = rawPath.split('/').map(canonicalSegment);
  for (const segment of segments) {
    if (segment === '.' || segment === '..') throw new UriPolicyError('dot-segment', 'URI paths may not contain dot segments');
  }
  return segments.join('/');
}

function canonicalSegment(segment: string): string {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const codePoint = segment.codePointAt(i) ?? 0;
    const ch = String.fromCodePoint(codePoint);
    if (codePoint >= 0xd800 && codePoint <= 0xdfff) throw new UriPolicyError('invalid-character', 'URI contains a lone surrogate');
    if (ch === '%') {
      const hex = segment.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new UriPolicyError('invalid-escape', 'URI contains an invalid percent-escape');
      const decoded = String.fromCharCode(parseInt(hex, 16));
      out += UNRESERVED.test(decoded) ? decoded : `%${hex.toUpperCase()}`;
      i += 2;
    } else if (PATH_SAFE.test(ch)) {
      out += ch;
    } else {
      // Non-ASCII and other characters are written as UTF-8 escapes, so both spellings compare equal.
      out += [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
      i += ch.length - 1;
    }
  }
  return out;
}

function checkQuery(query: string): string {
  if (/%(?![0-9A-Fa-f]{2})/.test(query)) throw new UriPolicyError('invalid-escape', 'URI query contains an invalid percent-escape');
  return query;
}
