import type { CspRejection } from '@apphost/contracts';

type CspField = CspRejection['field'];
type CspReason = CspRejection['reason'];

/** The `_meta.ui.csp` fields, in the order they are read and their rejections reported. */
export const CSP_FIELDS: readonly CspField[] = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'];

/** Longest value a rejection echoes (the contract's bound). */
const MAX_ECHO = 2048;
/** Longest entry considered at all: a DNS name is at most 253 characters, plus scheme and port. */
const MAX_ENTRY = 300;

/**
 * The View document's Content-Security-Policy header. The base is the MCP Apps default for a resource that declares
 * nothing (`default-src 'none'`, inline script and style, `data:` images and media, no connections), plus the scheme
 * sources bundled Apps need (`data:` for scripts, `blob:`/`data:` for workers, images, fonts, media), `object-src 'none'` (draft spec) and
 * `form-action 'none'` (a form post is a connection to an undeclared domain). Declared origins are only ever added to
 * the directive of their field: nothing a server declares can add a keyword, a wildcard origin or a directive.
 * `frame-ancestors` is not here: it names the host page's origin, so the gateway sets it where it serves the sandbox.
 */
export function buildViewCsp(declared: unknown, options: { development: boolean }): { header: string; rejected: CspRejection[] } {
  const csp = isRecord(declared) ? declared : {};
  const rejected: CspRejection[] = [];
  const accepted = {} as Record<CspField, string[]>;
  for (const field of CSP_FIELDS) accepted[field] = acceptField(field, csp[field], options, rejected);

  const resources = accepted.resourceDomains;
  const directives: [string, string[]][] = [
    ['default-src', ["'none'"]],
    // `data:` scripts (a bundled library's worker or module, e.g. pdf.js's) add nothing 'unsafe-inline' does not allow.
    ['script-src', ["'self'", "'unsafe-inline'", 'data:', ...resources]],
    ['style-src', ["'self'", "'unsafe-inline'", ...resources]],
    ['img-src', ["'self'", 'data:', 'blob:', ...resources]],
    ['font-src', ["'self'", 'data:', 'blob:', ...resources]],
    ['media-src', ["'self'", 'data:', 'blob:', ...resources]],
    // Cross-origin worker scripts are refused by browsers anyway; workers come from the document or a blob.
    ['worker-src', ["'self'", 'blob:']],
    ['connect-src', orNone(accepted.connectDomains)],
    ['frame-src', orNone(accepted.frameDomains)],
    ['object-src', ["'none'"]],
    ['form-action', ["'none'"]],
    ['base-uri', accepted.baseUriDomains.length ? accepted.baseUriDomains : ["'self'"]],
  ];
  return { header: directives.map(([name, sources]) => `${name} ${sources.join(' ')}`).join('; '), rejected: dedupeRejections(rejected) };
}

function orNone(sources: string[]): string[] {
  return sources.length ? sources : ["'none'"];
}

/** One field's accepted sources (normalized, deduplicated, sorted); everything else goes to `rejected`. */
function acceptField(field: CspField, raw: unknown, options: { development: boolean }, rejected: CspRejection[]): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    rejected.push({ field, value: describe(raw), reason: 'NOT_A_LIST' });
    return [];
  }
  const sources = new Set<string>();
  for (const entry of raw) {
    const verdict = classifyCspSource(field, entry, options);
    if (verdict.ok) sources.add(verdict.source);
    else rejected.push({ field, value: describe(entry), reason: verdict.reason });
  }
  return [...sources].sort();
}

export type CspSourceVerdict = { ok: true; source: string } | { ok: false; reason: CspReason };

const KEYWORD = /^'[^']*'$/;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is being refused
const ILLEGAL = /['";,\s\u0000-\u001f\u007f]/;
const SCHEME_ONLY = /^[A-Za-z][A-Za-z0-9+.-]*:$/;
const WITH_AUTHORITY = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/;
/** host[:port] with an optional lone trailing slash (the root path, which CSP treats as the whole origin). */
const AUTHORITY = /^([^/:]+)(?::([^/]*))?\/?$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1']);
const DEFAULT_PORTS: Record<string, string> = { https: '443', wss: '443', http: '80', ws: '80' };

/**
 * One declared entry → a normalized origin source (lowercase, default port dropped, no trailing slash) or the reason
 * it is refused. Accepted: `https://host[:port]`, `https://*.host` (at least two labels after the wildcard), `wss://`
 * in `connectDomains` only, and in development loopback `http://localhost|127.0.0.1[:port]` (`ws://` for connect).
 * Hosts are ASCII (IDNs in their `xn--` form); IPv6 literals are not accepted.
 */
export function classifyCspSource(field: CspField, entry: unknown, options: { development: boolean }): CspSourceVerdict {
  if (typeof entry !== 'string') return { ok: false, reason: 'NOT_A_STRING' };
  if (entry === '*') return { ok: false, reason: 'WILDCARD' };
  if (KEYWORD.test(entry)) return { ok: false, reason: 'KEYWORD' };
  if (ILLEGAL.test(entry)) return { ok: false, reason: 'ILLEGAL_CHARACTERS' };
  if (SCHEME_ONLY.test(entry)) return { ok: false, reason: 'SCHEME_ONLY' };
  const parts = WITH_AUTHORITY.exec(entry);
  if (!parts || entry.length > MAX_ENTRY) return { ok: false, reason: 'NOT_AN_ORIGIN' };
  const scheme = parts[1].toLowerCase();
  const authority = AUTHORITY.exec(parts[2]);
  if (!authority || /[@\\?#%[\]]/.test(parts[2])) return { ok: false, reason: 'NOT_AN_ORIGIN' };
  const host = authority[1].toLowerCase();
  const rawPort = authority[2];

  if (rawPort === '*') return { ok: false, reason: 'WILDCARD' };
  if (rawPort !== undefined && !isPort(rawPort)) return { ok: false, reason: 'NOT_AN_ORIGIN' };
  const wildcard = host.startsWith('*.');
  const name = wildcard ? host.slice(2) : host;
  if (name.includes('*')) return { ok: false, reason: 'WILDCARD' };
  if (!isHostName(name)) return { ok: false, reason: 'NOT_AN_ORIGIN' };
  if (wildcard && (name.split('.').length < 2 || isIpv4(name))) return { ok: false, reason: 'WILDCARD' };

  if (!schemeAllowed(field, scheme, name, wildcard, options)) return { ok: false, reason: 'SCHEME_NOT_ALLOWED' };
  const port = rawPort === undefined || rawPort === DEFAULT_PORTS[scheme] ? '' : `:${rawPort}`;
  return { ok: true, source: `${scheme}://${host}${port}` };
}

function schemeAllowed(field: CspField, scheme: string, host: string, wildcard: boolean, options: { development: boolean }): boolean {
  const connect = field === 'connectDomains';
  if (scheme === 'https') return true;
  if (scheme === 'wss') return connect;
  const loopback = options.development && !wildcard && LOOPBACK_HOSTS.has(host);
  if (scheme === 'http') return loopback;
  if (scheme === 'ws') return loopback && connect;
  return false;
}

function isPort(port: string): boolean {
  return /^[1-9][0-9]{0,4}$/.test(port) && Number(port) <= 65535;
}

/** LDH labels; a name whose last label is numeric must be a dotted-quad IPv4 address (as URL parsers read it). */
function isHostName(host: string): boolean {
  const labels = host.split('.');
  if (!labels.every((label) => LABEL.test(label))) return false;
  return /^[0-9]+$/.test(labels[labels.length - 1]) ? isIpv4(host) : true;
}

function isIpv4(host: string): boolean {
  const octets = host.split('.');
  return octets.length === 4 && octets.every((octet) => /^(0|[1-9][0-9]{0,2})$/.test(octet) && Number(octet) <= 255);
}

/** A printable echo of a refused entry for the rejection list (bounded). */
function describe(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (value === null || typeof value !== 'object') text = String(value);
  else text = Array.isArray(value) ? '[array]' : '[object]';
  return text.length > MAX_ECHO ? text.slice(0, MAX_ECHO) : text;
}

function dedupeRejections(rejections: CspRejection[]): CspRejection[] {
  const seen = new Set<string>();
  return rejections.filter((r) => {
    const key = `${r.field}\u0000${r.reason}\u0000${r.value}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
