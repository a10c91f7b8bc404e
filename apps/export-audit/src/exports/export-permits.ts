import { createHash, randomBytes } from 'node:crypto';
import { canonicalize } from '@apphost/canonical-json';
import type { CoordinationStore } from '@apphost/coordination';
import type { SessionKey } from '@apphost/contracts';

/** The longest a revocation marker is kept (the coordination store's TTL bound); later, lifecycle's own state denies. */
const MARKER_TTL_MS = 24 * 3600 * 1000;

export interface HeldPermit {
  key: string;
  value: string;
}

/**
 * Incarnation-bound export permits in export-audit's own coordination key prefix (`apphost:<prefix>export-audit:`).
 * An export acquires one while it reads the ledger and holds it until it releases; release takes it
 * (compare-and-delete), which is the instant the export wins. The deletion cascade's `revoke` writes a marker for the
 * incarnation and deletes its permits, so an export whose incarnation is marked (at acquire) or whose permit is gone
 * (at take) is denied: a delete racing an export wins unless the export already took its permit.
 */
export class ExportPermits {
  constructor(
    private readonly store: CoordinationStore,
    private readonly ttlMs: number,
  ) {}

  /** A fresh permit for one attempt; null when the incarnation is already revoked. */
  async acquire(session: SessionKey, incarnation: number, operationId: string): Promise<HeldPermit | null> {
    const digest = sessionDigest(session); // once: the permit's key and the marker's both name the session by it
    const key = `${permitPrefixOf(digest)}${incarnation}:${randomBytes(12).toString('base64url')}`;
    const value = canonicalize({ operationId, incarnation });
    await this.store.setIfAbsent(key, value, this.ttlMs);
    // Checked after the write: a revoke that landed before it is seen here; one after it deletes this permit.
    if ((await this.store.get(markerOfDigest(digest, incarnation))) !== null) {
      await this.store.compareAndDelete(key, value);
      return null;
    }
    return { key, value };
  }

  /**
   * Takes the permit at release: true only if it is still held (not revoked, not expired). One compare-and-delete is
   * enough: `revoke` writes its marker before it deletes permits, and `acquire` checks the marker after writing its
   * permit, so either the acquire saw the marker (no permit) or the revoke's deletion sees the permit (and this
   * compare-and-delete then fails), unless the take came first, which is the export winning the race.
   */
  async take(permit: HeldPermit): Promise<boolean> {
    return this.store.compareAndDelete(permit.key, permit.value);
  }

  /** Drops a permit the attempt no longer needs (denied or failed); idempotent. */
  async drop(permit: HeldPermit): Promise<void> {
    await this.store.compareAndDelete(permit.key, permit.value);
  }

  /** Cascade revoke: marks the incarnation and deletes its (and older incarnations') permits. Idempotent; returns how many. */
  async revoke(session: SessionKey, incarnation: number): Promise<number> {
    await this.store.setIfAbsent(markerOf(session, incarnation), '1', MARKER_TTL_MS);
    let fenced = 0;
    for (const key of await this.store.keysWithPrefix(permitPrefix(session))) {
      const held = Number(key.slice(permitPrefix(session).length).split(':')[0]);
      if (!(held <= incarnation)) continue;
      const value = await this.store.get(key);
      if (value !== null && (await this.store.compareAndDelete(key, value))) fenced++;
    }
    return fenced;
  }
}

function sessionDigest(session: SessionKey): string {
  return createHash('sha256').update(canonicalize(session)).digest('hex');
}

const permitPrefixOf = (digest: string) => `export-permit:${digest}:`;
const markerOfDigest = (digest: string, incarnation: number) => `export-revoked:${digest}:${incarnation}`;
const permitPrefix = (session: SessionKey) => permitPrefixOf(sessionDigest(session));
const markerOf = (session: SessionKey, incarnation: number) => markerOfDigest(sessionDigest(session), incarnation);
