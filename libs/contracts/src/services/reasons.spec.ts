import { AppHostError, errorEnvelopeSchema } from '../lib/errors';
import { ConnectionReasons, RegistryReasons } from './binding-registry/reasons';
import { CatalogReasons } from './catalog-policy/reasons';
import { ExportReasons } from './export-audit/reasons';
import { GovernedReasons } from './governed-operations/reasons';
import { LifecycleReasons } from './lifecycle-store/reasons';
import { SealedReasons } from './sealed-result-store/reasons';

/** What the table-driven cases need of a set (method syntax: each service's narrower set fits). */
interface AnyReasons {
  values: readonly string[];
  schema: { parse(value: unknown): unknown; safeParse(value: unknown): { success: boolean } };
  details(reason: string, extra?: Record<string, unknown>): Record<string, unknown>;
  of(error: unknown): string | undefined;
}

const SETS: Record<string, AnyReasons> = {
  'binding-registry': RegistryReasons,
  'catalog-policy': CatalogReasons,
  'export-audit': ExportReasons,
  'governed-operations': GovernedReasons,
  'lifecycle-store': LifecycleReasons,
  'sealed-result-store': SealedReasons,
};

describe('details.reason: one closed set per service', () => {
  it.each(Object.entries(SETS))('%s: parses each declared reason and rejects any other string', (_service, reasons) => {
    for (const reason of reasons.values) expect(reasons.schema.parse(reason)).toBe(reason);
    expect(new Set(reasons.values).size).toBe(reasons.values.length);
    expect(reasons.schema.safeParse('NOT_A_DECLARED_REASON').success).toBe(false);
    expect(reasons.schema.safeParse(reasons.values[0].toLowerCase() + '_').success).toBe(false);
  });

  it.each(Object.entries(SETS))('%s: reads a declared reason back from an error that crossed the bus, and nothing else', (_service, reasons) => {
    const [reason] = reasons.values;
    const crossed = AppHostError.fromEnvelope(errorEnvelopeSchema.parse(new AppHostError('CONFLICT', 'x', { details: reasons.details(reason) }).toEnvelope()));
    expect(reasons.of(crossed)).toBe(reason);
    expect(reasons.of(new AppHostError('CONFLICT', 'x', { details: { reason: 'NOT_A_DECLARED_REASON' } }))).toBeUndefined();
    expect(reasons.of(new AppHostError('CONFLICT', 'x'))).toBeUndefined();
    expect(reasons.of(new Error('plain'))).toBeUndefined();
  });

  it('keeps the wire form: details is { reason, ...extra }, reason first and never overridden', () => {
    expect(JSON.stringify(RegistryReasons.details('KEY_UNKNOWN', { keyId: 'k1' }))).toBe('{"reason":"KEY_UNKNOWN","keyId":"k1"}');
    expect(LifecycleReasons.details('CONTENDED')).toEqual({ reason: 'CONTENDED' });
    expect(LifecycleReasons.details('STALE_INCARNATION', { reason: 'OTHER', incarnation: 2 })).toEqual({ reason: 'STALE_INCARNATION', incarnation: 2 });
  });

  it('binding-registry answers with the reasons of the connections it owns', () => {
    for (const reason of ConnectionReasons.values) expect(RegistryReasons.schema.parse(reason)).toBe(reason);
  });

  it('only a declared reason compiles at a throw site', () => {
    // @ts-expect-error not a binding-registry reason
    RegistryReasons.details('TOOL_NOT_IN_CATALOG');
    // @ts-expect-error not a catalog-policy reason
    CatalogReasons.details('BINDING_CLOSED');
    // @ts-expect-error not a governed-operations reason
    GovernedReasons.details('STALE_INCARNATION');
    // @ts-expect-error not a lifecycle-store reason
    LifecycleReasons.details('DIGEST_MISMATCH');
    // @ts-expect-error not a sealed-result-store reason
    SealedReasons.details('CONTENDED');
    // @ts-expect-error not a connection reason
    ConnectionReasons.details('KEY_RETIRED');
    expect(SealedReasons.details('DIGEST_MISMATCH')).toEqual({ reason: 'DIGEST_MISMATCH' });
  });
});
