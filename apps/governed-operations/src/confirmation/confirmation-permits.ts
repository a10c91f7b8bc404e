import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalize } from '@apphost/canonical-json';
import type { CoordinationStore } from '@apphost/coordination';
import { AppHostError, confirmationIdSchema, sessionKeySchema, toolsetSelectionSchema, type Principal, type SessionKey } from '@apphost/contracts';

/**
 * A sealed one-shot confirmation permit: everything the decision needs, bound at admission (RFC §4 "sealed
 * confirmation permit"): tool identity (toolset, native name, declaration identity), server, binding revision, and
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
});
export type Permit = z.infer<typeof permitSchema>;

/**
 * Permits in the coordination store (Redis in deployments), one key per permit under a digest of its session key,
 * so a permit is only ever found through its own session. A permit is kept a while past its expiry so a late
 * decision learns "expired" rather than "unknown".
 */
export class ConfirmationPermits {
  constructor(
    private readonly store: CoordinationStore,
    private readonly retentionAfterExpiryMs: number,
  ) {}

  async put(permit: Permit, ttlMs: number): Promise<void> {
    const retention = Math.min(ttlMs + this.retentionAfterExpiryMs, 24 * 3600 * 1000);
    const stored = await this.store.setIfAbsent(keyOf(permit.session, permit.confirmationId), JSON.stringify(permitSchema.parse(permit)), retention);
    if (!stored) throw new AppHostError('INTERNAL', 'a confirmation permit id collided');
  }

  /**
   * Takes the permit exactly once: of concurrent decisions, only the one whose delete matches wins. Another
   * principal's, another session's or an already-decided permit is null, and is left where it is.
   */
  async take(session: SessionKey, principal: Principal, confirmationId: string): Promise<Permit | null> {
    const key = keyOf(session, confirmationId);
    const raw = await this.store.get(key);
    if (raw === null) return null;
    const parsed = permitSchema.safeParse(JSON.parse(raw));
    if (!parsed.success) throw new AppHostError('INTERNAL', 'a stored confirmation permit is unreadable');
    const permit = parsed.data;
    if (permit.principal.tenant !== principal.tenant || permit.principal.subject !== principal.subject) return null;
    return (await this.store.compareAndDelete(key, raw)) ? permit : null;
  }
}

function keyOf(session: SessionKey, confirmationId: string): string {
  const sessionDigest = createHash('sha256').update(canonicalize(session)).digest('hex');
  return `confirmation:${sessionDigest}:${confirmationId}`;
}
