import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { canonicalize } from '@apphost/canonical-json';
import { MAX_TTL_MS, MAX_VALUE_LENGTH, type CoordinationStore } from '@apphost/coordination';
import { AppHostError, errorEnvelopeSchema, GovernedReasons, invalidArgument } from '@apphost/contracts';
import type { IdempotencyPort, IdempotencyScope, IdempotencyTicket, RetainedOutcome } from './ports';

export interface ViewIdempotencyOptions {
  /** Added to the operation's deadline for its in-flight claim: past it, a crashed replica's claim lapses. */
  claimMarginMs?: number;
  /** First and largest pause of a duplicate waiting for an in-flight first use. */
  pollMs?: { first: number; max: number };
}

const DEFAULTS = { claimMarginMs: 5_000, pollMs: { first: 10, max: 200 } } as const;

const digestSchema = z.string().regex(/^[0-9a-f]{64}$/);
const retainedOutcomeSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('result'), result: z.record(z.string(), z.unknown()) }),
  z.strictObject({ kind: z.literal('error'), error: errorEnvelopeSchema }),
]);
const idempotencyRecordSchema = z.discriminatedUnion('state', [
  /** The first use runs now, on the replica holding `owner`. */
  z.strictObject({ v: z.literal(1), state: z.literal('in-flight'), identity: digestSchema, owner: z.string().regex(/^[0-9a-f]{32}$/) }),
  z.strictObject({ v: z.literal(1), state: z.literal('complete'), identity: digestSchema, outcome: retainedOutcomeSchema }),
  /** It ran, but its outcome (`length` characters as stored) did not fit the store: never run again, never answered. */
  z.strictObject({ v: z.literal(1), state: z.literal('not-retained'), identity: digestSchema, length: z.number().int() }),
]);
type IdempotencyRecord = z.infer<typeof idempotencyRecordSchema>;

const retentionSchema = z.number().int().positive();

/**
 * Retained outcomes of View `tools/call` / `resources/read` by idempotency key, in the coordination store (shared by
 * replicas) under `view-rpc-idem:<digest of the whole scope and the key>`: no principal data appears in a key, and the
 * operation identity is kept only as a digest. The first use claims the key (set-if-absent) and runs; a duplicate
 * with the same identity waits for its outcome and never runs; one with another identity is a conflict.
 *
 * The claim lasts until the operation's deadline plus a margin. A replica that dies mid-operation leaves its claim to
 * lapse, and the key then runs again: the RFC allows re-execution after process loss (the outcome was never
 * recorded, so no one was told it). Retention is capped at the store's longest TTL (24 h).
 */
export class ViewIdempotency implements IdempotencyPort {
  private readonly options: { claimMarginMs: number; pollMs: { first: number; max: number } };

  constructor(
    private readonly store: CoordinationStore,
    options: ViewIdempotencyOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  async begin(scope: IdempotencyScope, key: string, identity: string, retentionMs: number, deadlineAt: number): Promise<IdempotencyTicket> {
    const retention = retentionSchema.safeParse(retentionMs);
    if (!retention.success) throw invalidArgument('retentionMs', retention.error);
    const recordKey = `view-rpc-idem:${sha256(canonicalize({ scope, key }))}`;
    const identityDigest = sha256(identity);
    const claim = valueOf({ v: 1, state: 'in-flight', identity: identityDigest, owner: randomBytes(16).toString('hex') });
    for (let pause = this.options.pollMs.first; ;) {
      const claimTtl = Math.min(Math.max(deadlineAt - Date.now(), 1) + this.options.claimMarginMs, MAX_TTL_MS);
      if (await this.store.setIfAbsent(recordKey, claim, claimTtl))
        return new FirstUse(this.store, recordKey, claim, identityDigest, Math.min(retention.data, MAX_TTL_MS)).ticket();
      const raw = await this.store.get(recordKey);
      // Null: the record lapsed between the two reads; claim it again.
      if (raw === null) continue;
      const record = parseRecord(raw);
      if (record.identity !== identityDigest)
        throw new AppHostError('CONFLICT', 'the idempotency key was used for a different operation', {
          details: GovernedReasons.details('IDEMPOTENCY_KEY_CONFLICT'),
        });
      if (record.state === 'complete') return { kind: 'retained', outcome: record.outcome };
      if (record.state === 'not-retained')
        throw new AppHostError(
          'FAILED_PRECONDITION',
          'the operation of this idempotency key ran, but its outcome was too large to retain; it is not run again',
          {
            details: GovernedReasons.details('IDEMPOTENT_OUTCOME_NOT_RETAINED', { length: record.length }),
          },
        );
      const left = deadlineAt - Date.now();
      if (left <= 0)
        throw new AppHostError('OUTCOME_UNKNOWN', 'the first use of this idempotency key is still in flight', {
          retryable: false,
          details: GovernedReasons.details('CALL_IN_FLIGHT'),
        });
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
      pause = Math.min(pause * 2, this.options.pollMs.max);
    }
  }
}

/** The claim of a first use: `complete` or `abandon`, once (later calls do nothing; one the store failed may be retried). */
class FirstUse {
  private done = false;

  constructor(
    private readonly store: CoordinationStore,
    private readonly key: string,
    private readonly claim: string,
    private readonly identity: string,
    private readonly retentionMs: number,
  ) {}

  ticket(): IdempotencyTicket {
    return { kind: 'execute', complete: (outcome) => this.complete(outcome), abandon: () => this.abandon() };
  }

  private async complete(outcome: RetainedOutcome): Promise<void> {
    if (this.done) return;
    let value = valueOf({ v: 1, state: 'complete', identity: this.identity, outcome });
    if (value.length > MAX_VALUE_LENGTH) value = valueOf({ v: 1, state: 'not-retained', identity: this.identity, length: value.length });
    // A claim that lapsed while the operation ran is recorded anyway unless another use has claimed the key since.
    if (!(await this.store.compareAndSet(this.key, this.claim, value, this.retentionMs))) await this.store.setIfAbsent(this.key, value, this.retentionMs);
    this.done = true;
  }

  /** Nothing ran: the key is free again (only while the claim is still this use's). */
  private async abandon(): Promise<void> {
    if (this.done) return;
    await this.store.compareAndDelete(this.key, this.claim);
    this.done = true;
  }
}

/** A stored record of another shape or version answers as an outcome that cannot be delivered (never a re-run). */
function parseRecord(raw: string): IdempotencyRecord {
  let parsed: ReturnType<typeof idempotencyRecordSchema.safeParse> | undefined;
  try {
    parsed = idempotencyRecordSchema.safeParse(JSON.parse(raw));
  } catch {
    parsed = undefined;
  }
  if (parsed?.success) return parsed.data;
  throw new AppHostError('FAILED_PRECONDITION', 'the retained outcome of this idempotency key cannot be read; it is not run again', {
    details: GovernedReasons.details('IDEMPOTENT_OUTCOME_NOT_RETAINED', { unreadable: true }),
  });
}

function valueOf(record: IdempotencyRecord): string {
  return JSON.stringify(record);
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
