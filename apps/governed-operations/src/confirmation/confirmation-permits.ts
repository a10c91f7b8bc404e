import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalize } from '@apphost/canonical-json';
import type { CoordinationStore } from '@apphost/coordination';
import { AppHostError, confirmationIdSchema, sessionKeySchema, toolsetSelectionSchema, type Principal, type SessionKey } from '@apphost/contracts';

/**
 * A sealed one-shot confirmation permit: everything the decision needs, bound at admission so that what runs after
 * approval is exactly what was held, and the decision cannot change it (the body of a decision carries no
 * arguments): tool identity (toolset, native name, declaration identity), server, binding revision, and
 * the canonical arguments with their `confirmation-arguments` digest. Host-held; the model and the runtime only
 * ever see its id.
 */
export const permitSchema = z.strictObject({
  v: z.literal(1),
  confirmationId: confirmationIdSchema,
  principal: z.strictObject({ tenant: z.string(), subject: z.string() }),
  session: sessionKeySchema,
  incarnation: z.number().int().min(1),
  invocationId: z.string(),
  functionCallId: z.string(),
  /** The model-catalog name the model called. */
  tool: z.string(),
  toolsets: z.array(toolsetSelectionSchema).nullable(),
  toolsetId: z.string(),
  nativeName: z.string(),
  /** sha256 of the admitted declaration's identity (name, schemas, visibility, resource URI). */
  declarationDigest: z.string().regex(/^[0-9a-f]{64}$/),
  bindingRevision: z.string().nullable(),
  uiAssociated: z.boolean(),
  /** The arguments as canonical JSON: what executes after approval. */
  arguments: z.string(),
  argumentsDigest: z.string().regex(/^[0-9a-f]{64}$/),
  expiresAt: z.iso.datetime(),
  /** Present when the invocation consumed a View's `ui/message`: the decided call's event is stamped `mcp_app` too. */
  continuesMessage: z.literal(true).optional(),
});
export type Permit = z.infer<typeof permitSchema>;

/**
 * Permits in the coordination store (Redis in deployments), one key per permit under a digest of its session key,
 * so a permit is only ever found through its own session. A permit is kept a while past its expiry so a late
 * decision learns "expired" rather than "unknown". In the deletion cascade, `revoke` leaves a marker per session
 * incarnation that every later `take` (and `put`) honours, and `purge` deletes that incarnation's permits.
 * `now` is the clock permits expire by (tests advance it instead of waiting).
 */
export class ConfirmationPermits {
  constructor(
    private readonly store: CoordinationStore,
    private readonly retentionAfterExpiryMs: number,
    readonly now: () => number = Date.now,
  ) {}

  async put(permit: Permit, ttlMs: number): Promise<void> {
    const retention = Math.min(ttlMs + this.retentionAfterExpiryMs, MAX_RETENTION_MS);
    const raw = JSON.stringify(permitSchema.parse(permit));
    const key = keyOf(permit.session, permit.confirmationId);
    const stored = await this.store.setIfAbsent(key, raw, retention);
    if (!stored) throw new AppHostError('INTERNAL', 'a confirmation permit id collided');
    // Checked after the write: a revoke that landed before it is seen here, one after it is followed by a purge
    // that finds this permit.
    if (await this.revoked(permit.session, permit.incarnation)) {
      await this.store.compareAndDelete(key, raw);
      throw new AppHostError('NOT_FOUND', 'session not found');
    }
  }

  /**
   * Takes the permit exactly once: of concurrent decisions, only the one whose delete matches wins. Another
   * principal's, another session's, a revoked incarnation's or an already-decided permit is null, and is left where
   * it is.
   */
  async take(session: SessionKey, principal: Principal, confirmationId: string): Promise<Permit | null> {
    const key = keyOf(session, confirmationId);
    const raw = await this.store.get(key);
    if (raw === null) return null;
    const permit = parse(raw);
    if (permit.principal.tenant !== principal.tenant || permit.principal.subject !== principal.subject) return null;
    if (await this.revoked(session, permit.incarnation)) return null;
    return (await this.store.compareAndDelete(key, raw)) ? permit : null;
  }

  /**
   * Whether a missing take is explained here: a permit is still stored under this id (another principal's, or
   * lost to a concurrent decision), or the incarnation was revoked by the cascade. Otherwise the store lost it.
   */
  async explains(session: SessionKey, incarnation: number, confirmationId: string): Promise<boolean> {
    return (await this.store.get(keyOf(session, confirmationId))) !== null || (await this.revoked(session, incarnation));
  }

  /** Cascade revoke: no permit of `incarnation` can be taken or issued from now on. Idempotent. */
  async revoke(session: SessionKey, incarnation: number): Promise<void> {
    await this.store.setIfAbsent(revokedKeyOf(session, incarnation), '1', MAX_RETENTION_MS);
  }

  /** Cascade purge: revokes, then deletes every permit of `incarnation` and below. Idempotent; returns how many. */
  async purge(session: SessionKey, incarnation: number): Promise<number> {
    await this.revoke(session, incarnation);
    let deleted = 0;
    for (const key of await this.store.keysWithPrefix(sessionPrefixOf(session))) {
      const raw = await this.store.get(key);
      if (raw === null || parse(raw).incarnation > incarnation) continue;
      if (await this.store.compareAndDelete(key, raw)) deleted++;
    }
    return deleted;
  }

  private async revoked(session: SessionKey, incarnation: number): Promise<boolean> {
    return (await this.store.get(revokedKeyOf(session, incarnation))) !== null;
  }
}

/** The longest a permit (or a revocation marker, which must outlive every permit it covers) is kept. */
const MAX_RETENTION_MS = 24 * 3600 * 1000;

function parse(raw: string): Permit {
  const parsed = permitSchema.safeParse(JSON.parse(raw));
  if (!parsed.success) throw new AppHostError('INTERNAL', 'a stored confirmation permit is unreadable');
  return parsed.data;
}

function sessionDigestOf(session: SessionKey): string {
  return createHash('sha256').update(canonicalize(session)).digest('hex');
}

function sessionPrefixOf(session: SessionKey): string {
  return `confirmation:${sessionDigestOf(session)}:`;
}

function keyOf(session: SessionKey, confirmationId: string): string {
  return `${sessionPrefixOf(session)}${confirmationId}`;
}

function revokedKeyOf(session: SessionKey, incarnation: number): string {
  return `confirmation-revoked:${sessionDigestOf(session)}:${incarnation}`;
}
