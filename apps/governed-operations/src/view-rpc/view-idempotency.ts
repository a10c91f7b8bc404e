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
/** The scope's policy revision the outcome was produced under (reads); an outcome of another revision is stale. */
const policyRevisionSchema = z.string().max(256).nullable();
const idempotencyRecordSchema = z.discriminatedUnion('state', [
  /** The first use runs now, on the replica holding `owner`. */
  z.strictObject({
    v: z.literal(2),
    state: z.literal('in-flight'),
    identity: digestSchema,
    policyRevision: policyRevisionSchema,
    owner: z.string().regex(/^[0-9a-f]{32}$/),
  }),
  z.strictObject({
    v: z.literal(2),
    state: z.literal('complete'),
    identity: digestSchema,
    policyRevision: policyRevisionSchema,
    outcome: retainedOutcomeSchema,
  }),
  /** It ran, but its outcome (`length` characters as stored) did not fit the store: never run again, never answered. */
  z.strictObject({ v: z.literal(2), state: z.literal('not-retained'), identity: digestSchema, policyRevision: policyRevisionSchema, length: z.number().int() }),
]);
type IdempotencyRecord = z.infer<typeof idempotencyRecordSchema>;

const retentionSchema = z.number().int().positive();

/**
 * Retained outcomes of View `tools/call` / `resources/read` by idempotency key, in the coordination store (shared by
 * replicas) under `view-rpc-idem:<digest of the scope (less its policy revision) and the key>`: no principal data appears in a
 * key, and the operation identity is kept only as a digest. The first use claims the key (set-if-absent) and runs; a
 * duplicate with the same identity waits for its outcome and never runs; one with another identity (a call and a read
 * under one key too) is a conflict. The policy revision is kept in the record: an outcome retained under another
 * revision is stale, and the use that finds it takes the key over (compare-and-set) and runs.
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
    // The policy revision is not part of the key: a call and a read under one key must meet (and conflict).
    const { policyRevision, ...namespace } = scope;
    const recordKey = `view-rpc-idem:${sha256(canonicalize({ scope: namespace, key }))}`;
    const identityDigest = sha256(identity);
    const claim = valueOf({ v: 2, state: 'in-flight', identity: identityDigest, policyRevision, owner: randomBytes(16).toString('hex') });
    const firstUse = () => new FirstUse(this.store, recordKey, claim, identityDigest, policyRevision, Math.min(retention.data, MAX_TTL_MS)).ticket();
    for (let pause = this.options.pollMs.first; ;) {
      const claimTtl = Math.min(Math.max(deadlineAt - Date.now(), 1) + this.options.claimMarginMs, MAX_TTL_MS);
      if (await this.store.setIfAbsent(recordKey, claim, claimTtl)) return firstUse();
      const raw = await this.store.get(recordKey);
      // Null: the record lapsed between the two reads; claim it again.
      if (raw === null) continue;
      const record = parseRecord(raw);
      if (record.identity !== identityDigest)
        throw new AppHostError('CONFLICT', 'the idempotency key was used for a different operation', {
          details: GovernedReasons.details('IDEMPOTENCY_KEY_CONFLICT'),
        });
      // An outcome of another policy revision is stale: taken over (only as it was read) and run again.
      if (record.state !== 'in-flight' && record.policyRevision !== policyRevision) {
        if (await this.store.compareAndSet(recordKey, raw, claim, claimTtl)) return firstUse();
        continue;
      }
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
    private readonly policyRevision: string | null,
    private readonly retentionMs: number,
  ) {}

  ticket(): IdempotencyTicket {
    return { kind: 'execute', complete: (outcome, retentionMs) => this.complete(outcome, retentionMs), abandon: () => this.abandon() };
  }

  /** `retentionMs`: a shorter retention for this outcome (a read's `ttlMs`); 0 retains nothing (the key is free again). */
  private async complete(outcome: RetainedOutcome, retentionMs?: number): Promise<void> {
    if (this.done) return;
    if (retentionMs !== undefined && !(retentionMs > 0)) return this.abandon();
    const retention = Math.max(1, Math.min(this.retentionMs, Math.floor(retentionMs ?? this.retentionMs)));
    const { identity, policyRevision } = this;
    let value = valueOf({ v: 2, state: 'complete', identity, policyRevision, outcome });
    if (value.length > MAX_VALUE_LENGTH) value = valueOf({ v: 2, state: 'not-retained', identity, policyRevision, length: value.length });
    // A claim that lapsed while the operation ran is recorded anyway unless another use has claimed the key since.
    if (!(await this.store.compareAndSet(this.key, this.claim, value, retention))) await this.store.setIfAbsent(this.key, value, retention);
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
