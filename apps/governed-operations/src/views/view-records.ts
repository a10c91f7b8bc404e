import { z } from 'zod';
import type { CoordinationStore } from '@apphost/coordination';
import {
  AppHostError,
  coldActionSchema,
  placeholderReasonSchema,
  sessionKeySchema,
  viewIdSchema,
  viewRevocationReasonSchema,
  viewWidgetSchema,
  type SessionKey,
} from '@apphost/contracts';
import {
  contextSequenceKeyOf,
  contextSequencesPrefixOf,
  incarnationInKey,
  sessionRevokedKeyOf,
  sessionViewKeyOf,
  sessionViewsPrefixOf,
  viewKeyOf,
  VIEW_KEY_PREFIX,
} from './view-keys';

/** One committed model-context register: what the View last said, with its host-assigned commit sequence and size. */
export const contextRegisterSchema = z.strictObject({
  commitSequence: z.number().int().min(1),
  /** The update's content blocks as the published schema admitted them (only advertised modalities reach here). */
  content: z.array(z.looseObject({ type: z.string() })),
  structuredContent: z.record(z.string(), z.unknown()).nullable(),
  /** Canonical JSON bytes of `{ content, structuredContent }`: what the per-register and per-session caps count. */
  bytes: z.number().int().min(0),
  committedAt: z.iso.datetime(),
});
export type ContextRegister = z.infer<typeof contextRegisterSchema>;

/**
 * One View as governed-operations holds it (coordination store, `view:<viewId>`), so any replica serves it.
 * `OPENING` is a bootstrap in progress: its reference may be held already (`leaseId`), so a crash there leaves a
 * record the sweep releases. The grant is never stored, only its `view-grant` digest.
 */
export const viewRecordSchema = z.strictObject({
  v: z.literal(1),
  viewId: viewIdSchema,
  mode: z.enum(['live', 'placeholder']),
  state: z.enum(['OPENING', 'ACTIVE', 'REVOKED', 'CLOSED']),
  /** The revocation reason (REVOKED, or TORN_DOWN when CLOSED), or the placeholder reason. */
  reason: z.union([viewRevocationReasonSchema, placeholderReasonSchema]).nullable(),
  /** `view-principal` digest of the opener's tenant and subject: only the opener renews. */
  principalDigest: z.string().regex(/^[0-9a-f]{64}$/),
  session: sessionKeySchema,
  incarnation: z.number().int().min(1),
  widget: viewWidgetSchema,
  viewGeneration: z.number().int().min(1),
  serverId: z.string().nullable(),
  profileId: z.string().nullable(),
  bindingRevision: z.string().nullable(),
  bindingGeneration: z.number().int().min(1).nullable(),
  generation: z
    .strictObject({
      generationId: z.uuid(),
      fence: z.number().int().min(1),
      ownerInstanceId: z.string(),
      connectionClass: z.enum(['app-safe', 'full']),
    })
    .nullable(),
  /** The View's reference on its generation (`binding-registry.retain`); `released` once given back. */
  leaseId: z.uuid().nullable(),
  released: z.boolean(),
  grantDigest: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  leaseMs: z.number().int().min(1).nullable(),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime().nullable(),
  teardownRequestedAt: z.iso.datetime().nullable(),
  /** A placeholder's cold affordances, and whether `refresh` is allowed (the replay classification's verdict). */
  actions: z.array(coldActionSchema),
  replaySafe: z.boolean(),
  /**
   * The View's model-context register (`ui/update-model-context`): its latest committed replacement state, or null
   * (never set, cleared by an empty update, or dropped when the View ended). Inside the record, so a commit is one
   * compare-and-set, atomic with a teardown's.
   */
  register: contextRegisterSchema.nullable().default(null),
  /** The commit sequence of the View's latest committed update (a clear included); 0 before any. Only a higher one commits. */
  contextSequence: z.number().int().min(0).default(0),
});
export type ViewRecord = z.infer<typeof viewRecordSchema>;

/** A record as read, with the exact stored string every compare-and-set is made against. */
export interface StoredView {
  record: ViewRecord;
  raw: string;
}

/**
 * View records and the session index in the coordination store. Every change is a compare-and-set on the exact
 * stored value, so of two replicas changing one View only one wins; the loser reads again.
 */
export class ViewRecords {
  constructor(
    private readonly store: CoordinationStore,
    private readonly closedRetentionMs: number,
  ) {}

  /**
   * Writes the record and its session index entry together (one round trip): the cascade's guarantee needs only
   * that both are written before the caller reads the revocation marker, which it does after this returns.
   */
  async create(record: ViewRecord): Promise<StoredView> {
    const raw = serialize(record);
    const [, created] = await Promise.all([
      this.store.setIfAbsent(sessionViewKeyOf(record.session, record.incarnation, record.viewId), record.viewId, MAX_TTL_MS),
      this.store.setIfAbsent(viewKeyOf(record.viewId), raw, clampTtl(this.ttlOf(record))),
    ]);
    if (!created) throw new AppHostError('INTERNAL', 'a View id collided');
    return { record, raw };
  }

  async find(viewId: string): Promise<StoredView | null> {
    const raw = await this.store.get(viewKeyOf(viewId));
    if (raw === null) return null;
    const parsed = viewRecordSchema.safeParse(JSON.parse(raw));
    if (!parsed.success) throw new AppHostError('INTERNAL', 'a stored View record is unreadable');
    return { record: parsed.data, raw };
  }

  /** Replaces the record if it is still `current`; null when another change won (read again). */
  async update(current: StoredView, next: ViewRecord): Promise<StoredView | null> {
    const raw = serialize(next);
    const done = await this.store.compareAndSet(viewKeyOf(next.viewId), current.raw, raw, clampTtl(this.ttlOf(next)));
    return done ? { record: next, raw } : null;
  }

  /**
   * Deletes a half-made View (a failed bootstrap) and its index entry, if the record is still `current`; false when
   * another change won (nothing deleted: read again).
   */
  async delete(current: StoredView): Promise<boolean> {
    if (!(await this.store.compareAndDelete(viewKeyOf(current.record.viewId), current.raw))) return false;
    const { session, incarnation, viewId } = current.record;
    await this.store.compareAndDelete(sessionViewKeyOf(session, incarnation, viewId), viewId);
    return true;
  }

  /** The ids of the session's Views of `incarnation` and below (the session index: a scan, for the cascade only). */
  async ofSession(session: SessionKey, incarnation: number): Promise<{ viewId: string; indexKey: string }[]> {
    const prefix = sessionViewsPrefixOf(session);
    const keys = await this.store.keysWithPrefix(prefix);
    return keys.filter((k) => incarnationInKey(k, prefix) <= incarnation).map((k) => ({ viewId: k.slice(k.lastIndexOf(':') + 1), indexKey: k }));
  }

  /**
   * Cascade revoke: from now on no View of `incarnation` opens. Written before the cascade scans the session's
   * Views, and read by a bootstrap after it wrote its record: either the bootstrap sees the marker, or the scan
   * finds its record. Idempotent.
   */
  async markSessionRevoked(session: SessionKey, incarnation: number): Promise<void> {
    await this.store.setIfAbsent(sessionRevokedKeyOf(session, incarnation), '1', MAX_TTL_MS);
  }

  async sessionRevoked(session: SessionKey, incarnation: number): Promise<boolean> {
    return (await this.store.get(sessionRevokedKeyOf(session, incarnation))) !== null;
  }

  /** Every View id (a scan, for the sweep only). */
  async all(): Promise<string[]> {
    return (await this.store.keysWithPrefix(VIEW_KEY_PREFIX)).map((k) => k.slice(VIEW_KEY_PREFIX.length));
  }

  /** Cascade purge: the View record and its index entry. */
  async purge(viewId: string, indexKey: string): Promise<void> {
    const raw = await this.store.get(viewKeyOf(viewId));
    if (raw !== null) await this.store.compareAndDelete(viewKeyOf(viewId), raw);
    await this.store.compareAndDelete(indexKey, viewId);
  }

  /**
   * The next model-context commit sequence of the session's incarnation: host-assigned, strictly increasing (a
   * fence), taken before the commit's compare-and-set (a sequence that never commits leaves a harmless gap).
   */
  nextContextSequence(session: SessionKey, incarnation: number): Promise<number> {
    return this.store.incrementFence(contextSequenceKeyOf(session, incarnation));
  }

  /** Cascade purge: the commit sequences of `incarnation` and below (their Views are gone: nothing compares with them). */
  async purgeContextSequences(session: SessionKey, incarnation: number): Promise<void> {
    const prefix = contextSequencesPrefixOf(session);
    for (const key of await this.store.keysWithPrefix(prefix)) {
      if (incarnationInKey(key, prefix) > incarnation) continue;
      const value = await this.store.get(key);
      if (value !== null) await this.store.compareAndDelete(key, value);
    }
  }

  /**
   * How long a record is kept: a live View a grace period past its lease (so a late call learns LEASE_EXPIRED),
   * an ended one `closedRetentionMs` (its state answers `get-view`), a placeholder the closed retention too.
   */
  private ttlOf(record: ViewRecord): number {
    if (record.state === 'ACTIVE' && record.expiresAt) return Date.parse(record.expiresAt) - Date.now() + this.closedRetentionMs;
    // A bootstrap's record outlives the sweep's abandonment threshold, so a crashed one is always found and released.
    if (record.state === 'OPENING') return Math.max(this.closedRetentionMs, OPENING_RETENTION_MS);
    return this.closedRetentionMs;
  }
}

/** How long a bootstrap's record is kept at least: twice the sweep's abandonment threshold. */
const OPENING_RETENTION_MS = 10 * 60_000;

/** The coordination store's longest TTL (a day): no View state outlives it. */
const MAX_TTL_MS = 24 * 3600 * 1000;

function clampTtl(ms: number): number {
  return Math.max(1_000, Math.min(MAX_TTL_MS, Math.ceil(ms)));
}

function serialize(record: ViewRecord): string {
  return JSON.stringify(viewRecordSchema.parse(record));
}
