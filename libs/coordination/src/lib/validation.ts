import { z } from 'zod';
import { AppHostError, invalidArgument } from '@apphost/contracts';
import { MAX_ADMISSION_WINDOWS, MAX_KEY_LENGTH, MAX_SLOT_CAPACITY, MAX_TTL_MS, MAX_VALUE_LENGTH, type Admission } from './coordination-store';

/**
 * A namespace such as `apphost:governed-operations:`. The trailing colon keeps `app:` from being a prefix of
 * `app2:`; the restricted alphabet keeps glob characters out, so `SCAN MATCH <prefix>*` is exact.
 */
const keyPrefixSchema = z
  .string()
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*:$/, 'must be letters, digits, "_", ".", "-", ":" and end with ":"');
const nameSchema = z.string().min(1).max(128);
const keySchema = z.string().min(1).max(MAX_KEY_LENGTH);
const valueSchema = z.string().max(MAX_VALUE_LENGTH);
const ttlSchema = z.number().int().positive().max(MAX_TTL_MS);
const deltaSchema = z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);
const holderSchema = z.string().min(1).max(MAX_KEY_LENGTH);
const capacitySchema = z.number().int().min(1).max(MAX_SLOT_CAPACITY);

const windowSchema = z
  .strictObject({
    key: keySchema,
    previousKey: keySchema,
    limit: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    windowMs: ttlSchema,
    elapsedMs: z.number().int().min(0),
    ttlMs: ttlSchema,
  })
  .refine((w) => w.elapsedMs <= w.windowMs, 'elapsedMs must be within the window');
const admissionSchema = z.strictObject({
  windows: z.array(windowSchema).max(MAX_ADMISSION_WINDOWS),
  slot: z.strictObject({ key: keySchema, holder: holderSchema, capacity: capacitySchema, ttlMs: ttlSchema }),
  claim: z.strictObject({ key: keySchema, value: valueSchema, ttlMs: ttlSchema }).optional(),
  refusals: z.strictObject({ key: keySchema, ttlMs: ttlSchema }).optional(),
});

function check<T>(schema: z.ZodType<T>, what: string, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw invalidArgument(what, parsed.error);
  return parsed.data;
}

export const checkKeyPrefix = (input: unknown): string => check(keyPrefixSchema, 'keyPrefix', input);
export const checkName = (input: unknown): string => check(nameSchema, 'name', input);
export const checkKey = (input: unknown): string => check(keySchema, 'key', input);
export const checkValue = (input: unknown): string => check(valueSchema, 'value', input);
export const checkTtl = (input: unknown): number => check(ttlSchema, 'ttlMs', input);
export const checkDelta = (input: unknown): number => check(deltaSchema, 'by', input);
export const checkHolder = (input: unknown): string => check(holderSchema, 'holder', input);
export const checkCapacity = (input: unknown): number => check(capacitySchema, 'capacity', input);
export const checkAdmission = (input: unknown): Admission => check(admissionSchema, 'admission', input);

/**
 * The store is closed or its backend is unreachable. Retryable: every operation here is safe to repeat (a write
 * cut off in flight may have landed, but a lease it took expires with its TTL and a fence only skips a number).
 */
export function unavailable(details: Record<string, unknown>): AppHostError {
  return new AppHostError('UNAVAILABLE', 'coordination store unavailable', { details });
}

/** INCR on a key holding something other than an integer (a wiring mistake: a lease key used as a fence or counter). */
export function notAnInteger(key: string): AppHostError {
  return new AppHostError('FAILED_PRECONDITION', 'key does not hold an integer', { details: { key } });
}

/** A slot operation on a key holding something other than slots (a wiring mistake: a lease key used for slots). */
export function notSlots(key: string): AppHostError {
  return new AppHostError('FAILED_PRECONDITION', 'key does not hold slots', { details: { key } });
}
