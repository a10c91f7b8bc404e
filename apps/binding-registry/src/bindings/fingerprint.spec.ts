import { canonicalDigest } from '@apphost/canonical-json';
import { DEFAULT_EXPORT_POLICY, hostProfileSchema, type HostProfile } from '@apphost/contracts';
import { bindingDigest, fingerprintSubset } from './fingerprint';

/*
 * The fingerprint rule: the View fields enter the binding fingerprint only when a profile sets them, so every
 * profile stored before they existed keeps its bindingRevision byte for byte. The goldens below were computed by
 * the fingerprint code as it was before the View fields existed; they must never change.
 */
const BASE: HostProfile = hostProfileSchema.parse({
  extension: { mimeTypes: ['text/html;profile=mcp-app'] },
  hostCapabilities: { openLinks: false, serverTools: true, serverResources: true, logging: false },
  renderer: { id: 'apphost-reference-host', version: '1' },
  providers: {
    principalResolver: { service: 'gateway' },
    sessionAuthorizer: { service: 'governed-operations' },
    keyProvider: { service: 'binding-registry' },
    sealedResultStore: { service: 'sealed-result-store' },
    lifecycleStore: { service: 'lifecycle-store' },
    exportAuditStore: { service: 'export-audit' },
  },
  replayClassification: { source: 'profile', revision: '1' },
  callbackPolicy: { sampling: 'deny', elicitation: 'model-only', roots: 'deny' },
  connectionPolicy: { affinity: 'per-session', idleEvictMs: 600000, maxLifetimeMs: 3600000 },
  resourcePolicy: { revision: '1', entries: [{ match: 'prefix', uri: 'ui://' }] },
  limits: {
    revision: '1',
    discovery: { maxPages: 8, maxItems: 2000, maxBytes: 1048576, maxTimeMs: 10000 },
    mrtr: { maxRounds: 2, maxTotalMs: 30000 },
    callTimeoutMs: 30000,
    readTimeoutMs: 30000,
  },
});
const GOLDEN_BINDING_DIGEST = 'c6d7cd41092b53d1e96470ee2b84baf8b763903f10ed323a7a45c3ebd0132a50';
const GOLDEN_PROFILE_FINGERPRINT = '096d661752723ea2d77934e905aa7382cf47ef6859b4d839f8ec5103b23e8fa1';

const VARIANTS: [string, (p: HostProfile) => HostProfile][] = [
  ['views', (p) => ({ ...p, views: { leaseMs: 60_000 } })],
  ['rpc', (p) => ({ ...p, rpc: { perViewPerMinute: 60 } })],
  ['idempotency', (p) => ({ ...p, idempotency: { retentionMs: 3_600_000 } })],
  ['replay', (p) => ({ ...p, replay: { tools: ['get-time'] } })],
  ['registers', (p) => ({ ...p, registers: { maxRegisterBytes: 1024 } })],
  ['callbackPolicy.message', (p) => ({ ...p, callbackPolicy: { ...p.callbackPolicy, message: 'accept' } })],
  ['callbackPolicy.requestTeardown', (p) => ({ ...p, callbackPolicy: { ...p.callbackPolicy, requestTeardown: 'accept' } })],
];

describe('binding fingerprint', () => {
  it('a profile without the View fields keeps its digest byte for byte (golden)', () => {
    expect(bindingDigest('demo', 'demo', BASE)).toBe(GOLDEN_BINDING_DIGEST);
    expect(canonicalDigest('binding-revision', fingerprintSubset(BASE))).toBe(GOLDEN_PROFILE_FINGERPRINT);
  });

  it('an unset optional field written as undefined is the same as an absent one', () => {
    const withUndefined = { ...BASE, views: undefined, callbackPolicy: { ...BASE.callbackPolicy, message: undefined } };
    expect(bindingDigest('demo', 'demo', withUndefined)).toBe(GOLDEN_BINDING_DIGEST);
  });

  it.each(VARIANTS)('setting %s changes the digest', (_field, vary) => {
    const varied = hostProfileSchema.parse(vary(BASE));
    expect(bindingDigest('demo', 'demo', varied)).not.toBe(GOLDEN_BINDING_DIGEST);
  });

  it('each field changes it differently, and a different value of one field is another digest', () => {
    const digests = VARIANTS.map(([, vary]) => bindingDigest('demo', 'demo', vary(BASE)));
    expect(new Set(digests).size).toBe(VARIANTS.length);
    expect(bindingDigest('demo', 'demo', { ...BASE, views: { leaseMs: 120_000 } })).not.toBe(digests[0]);
  });

  it('fields outside the subset (hostCapabilities.openLinks, export) leave it unchanged', () => {
    const other = { ...BASE, hostCapabilities: { ...BASE.hostCapabilities, openLinks: true }, export: { ...DEFAULT_EXPORT_POLICY } };
    expect(bindingDigest('demo', 'demo', hostProfileSchema.parse(other))).toBe(GOLDEN_BINDING_DIGEST);
  });
});
