import { z } from 'zod';
import { defineContract, instanceSubject } from './contract';
import { AppHostError, DEFAULT_RETRYABLE, ERROR_CODES, errorEnvelopeSchema, HTTP_STATUS_BY_CODE, invalidArgument } from './errors';
import { describeContract } from './describe';
import { principalSchema, sessionKeySchema, SERVICE_NAMES } from './values';

describe('contracts', () => {
  const contract = defineContract({
    service: 'lifecycle-store',
    operation: 'create-session',
    version: 2,
    request: z.object({ a: z.string() }),
    response: z.object({}),
  });

  it('names subjects apphost.<service>.<operation>.v<N>', () => {
    expect(contract.subject).toBe('apphost.lifecycle-store.create-session.v2');
    expect(Object.isFrozen(contract)).toBe(true);
    for (const service of SERVICE_NAMES) expect(describeContract(service).subject).toBe(`apphost.${service}.describe.v1`);
  });

  it('refuses operation names and versions that would break subject routing', () => {
    const base = { service: 'gateway' as const, request: z.object({}), response: z.object({}) };
    expect(() => defineContract({ ...base, operation: 'a.b', version: 1 })).toThrow(/operation name/);
    expect(() => defineContract({ ...base, operation: 'Upper', version: 1 })).toThrow(/operation name/);
    expect(() => defineContract({ ...base, operation: 'ok', version: 0 })).toThrow(/version/);
  });

  it('builds per-instance subjects only from single-token instance ids', () => {
    expect(instanceSubject(contract, 'pod-1', 'conn')).toBe('apphost.lifecycle-store.conn.pod-1.create-session.v2');
    expect(() => instanceSubject(contract, 'a.b')).toThrow(/instance id/);
    expect(() => instanceSubject(contract, '*')).toThrow(/instance id/);
  });

  it('round-trips a domain error through its envelope', () => {
    const error = new AppHostError('CONFLICT', 'taken', { details: { id: 'x' } });
    const envelope = errorEnvelopeSchema.parse(JSON.parse(JSON.stringify(error.toEnvelope())));
    expect(envelope).toEqual({ code: 'CONFLICT', message: 'taken', retryable: false, details: { id: 'x' } });
    const back = AppHostError.fromEnvelope(envelope);
    expect(back).toBeInstanceOf(AppHostError);
    expect(back.toEnvelope()).toEqual(envelope);
  });

  it('marks only not-executed failures as safe to retry blindly', () => {
    expect(DEFAULT_RETRYABLE.UNAVAILABLE).toBe(true);
    expect(DEFAULT_RETRYABLE.OUTCOME_UNKNOWN).toBe(false);
    expect(new AppHostError('UNAVAILABLE', 'x').retryable).toBe(true);
    for (const code of ERROR_CODES) expect(HTTP_STATUS_BY_CODE[code]).toBeGreaterThanOrEqual(400);
  });

  it('maps codes to HTTP as the usual gRPC-to-HTTP mapping does (the table in docs/errors.md)', () => {
    expect(HTTP_STATUS_BY_CODE).toEqual({
      INVALID_ARGUMENT: 400,
      FAILED_PRECONDITION: 400,
      UNAUTHENTICATED: 401,
      PERMISSION_DENIED: 403,
      NOT_FOUND: 404,
      CONFLICT: 409,
      PAYLOAD_TOO_LARGE: 413,
      RESOURCE_EXHAUSTED: 429,
      INTERNAL: 500,
      DATA_LOSS: 500,
      UNAVAILABLE: 503,
      OUTCOME_UNKNOWN: 504,
      DEADLINE_EXCEEDED: 504,
    });
  });

  it('reports the offending paths of an invalid payload', () => {
    const parsed = z
      .object({ a: z.object({ b: z.number() }), c: z.string() })
      .strict()
      .safeParse({ a: { b: 'x' }, d: 1 });
    expect(parsed.success).toBe(false);
    const error = invalidArgument('request', parsed.error!);
    const paths = (error.details?.issues as { path: string }[]).map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['a.b', 'c', '(root)']));
  });

  it('validates principals and session keys strictly', () => {
    expect(principalSchema.safeParse({ tenant: 'acme', subject: 'u1', scopes: ['runtime'] }).success).toBe(true);
    expect(principalSchema.safeParse({ tenant: 'a.b', subject: 'u1', scopes: [] }).success).toBe(false);
    expect(sessionKeySchema.safeParse({ tenant: 'acme', appName: 'app', userId: 'u', sessionId: 's 1' }).success).toBe(false);
  });
});
