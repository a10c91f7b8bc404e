import { createHash } from 'node:crypto';
import { canonicalize } from '@apphost/canonical-json';
import type { SessionKey } from '@apphost/contracts';

/**
 * The coordination-store key layout of Views (under the service's `apphost:<prefix>governed-operations:`). Session
 * keys appear only as a SHA-256 of their canonical form, so no key names a tenant or user.
 * - `view:<viewId>`: the View record.
 * - `view-session:<sessionDigest>:<incarnation>:<viewId>`: the session's index of its Views (the cascade scans it).
 * - `view-producer:<sessionDigest>:<incarnation>:<callDigest>`: the producing generation of one sealed UI call.
 * - `view-lock:<sessionDigest>`: the short per-session lock of phase 2 of a teardown.
 * - `view-revoked:<sessionDigest>:<incarnation>`: the cascade revoked the incarnation's Views (no new one opens).
 * - `view-context-seq:<sessionDigest>:<incarnation>`: the incarnation's model-context commit sequence (a fence).
 */
export function sessionDigestOf(session: SessionKey): string {
  return createHash('sha256').update(canonicalize(session)).digest('hex');
}

export const viewKeyOf = (viewId: string) => `view:${viewId}`;

export const VIEW_KEY_PREFIX = 'view:';

export const sessionViewsPrefixOf = (session: SessionKey) => `view-session:${sessionDigestOf(session)}:`;

export const sessionViewKeyOf = (session: SessionKey, incarnation: number, viewId: string) => `${sessionViewsPrefixOf(session)}${incarnation}:${viewId}`;

export const producersPrefixOf = (session: SessionKey) => `view-producer:${sessionDigestOf(session)}:`;

export const sessionRevokedKeyOf = (session: SessionKey, incarnation: number) => `view-revoked:${sessionDigestOf(session)}:${incarnation}`;

export const contextSequencesPrefixOf = (session: SessionKey) => `view-context-seq:${sessionDigestOf(session)}:`;

export const contextSequenceKeyOf = (session: SessionKey, incarnation: number) => `${contextSequencesPrefixOf(session)}${incarnation}`;

export const sessionLockKeyOf = (session: SessionKey) => `view-lock:${sessionDigestOf(session)}`;

/** The incarnation a `<prefix><incarnation>:<rest>` key names (the session index and producer keys). */
export function incarnationInKey(key: string, prefix: string): number {
  return Number(key.slice(prefix.length).split(':')[0]);
}
