import { createHash, randomUUID } from 'node:crypto';
import type { TransferLimits } from '../limits';
import { chunkCount } from './transfer-protocol';

/** How a parked reply ended: read whole, expired unread, or dropped when its server stopped. */
export type ParkedEnd = 'read' | 'expired' | 'stopped';

export type ParkResult =
  | { parked: true; transferId: string; totalBytes: number; chunkBytes: number; sha256: string }
  | { parked: false; why: 'over-capacity'; retryAfterMs: number }
  | { parked: false; why: 'larger-than-capacity' };

export type ChunkRead = { chunk: Uint8Array } | { missing: 'unknown-transfer' | 'no-such-chunk' };

interface Parked {
  label: string;
  bytes: Uint8Array;
  unread: Set<number>;
  expiresAt: number;
  timer: NodeJS.Timeout;
}

/** After the request's deadline its requester has given up; the margin only absorbs clock skew between hosts. */
const DEADLINE_MARGIN_MS = 1000;

/**
 * The replies one server process holds until their requesters have read them: bounded in total bytes and in time.
 * A reply is freed once every chunk was read, or at its TTL (or its request's deadline, if sooner), whichever comes
 * first.
 */
export class ParkedReplies {
  private readonly replies = new Map<string, Parked>();
  private bytes = 0;
  private emptied: Array<() => void> = [];

  constructor(
    private readonly limits: TransferLimits,
    private readonly onEnd: (label: string, end: ParkedEnd, bytes: number) => void,
  ) {}

  get parkedBytes(): number {
    return this.bytes;
  }

  get parkedCount(): number {
    return this.replies.size;
  }

  /** `label` names the operation in metrics; `deadline` (epoch ms) is the request's, when it has one. */
  park(label: string, bytes: Uint8Array, deadline?: number): ParkResult {
    if (bytes.byteLength > this.limits.maxParkedBytes) return { parked: false, why: 'larger-than-capacity' };
    if (this.bytes + bytes.byteLength > this.limits.maxParkedBytes) return { parked: false, why: 'over-capacity', retryAfterMs: this.nextExpiryMs() };
    const transferId = randomUUID();
    const chunks = chunkCount(bytes.byteLength, this.limits.chunkBytes);
    const lifeMs = Math.min(this.limits.ttlMs, deadline === undefined ? Infinity : Math.max(0, deadline - Date.now()) + DEADLINE_MARGIN_MS);
    const timer = setTimeout(() => this.free(transferId, 'expired'), lifeMs);
    // A parked reply must never keep a process alive that is otherwise done.
    timer.unref();
    this.replies.set(transferId, {
      label,
      bytes,
      unread: new Set(Array.from({ length: chunks }, (_, i) => i)),
      expiresAt: Date.now() + lifeMs,
      timer,
    });
    this.bytes += bytes.byteLength;
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return { parked: true, transferId, totalBytes: bytes.byteLength, chunkBytes: this.limits.chunkBytes, sha256 };
  }

  read(transferId: string, index: number): ChunkRead {
    const parked = this.replies.get(transferId);
    if (!parked) return { missing: 'unknown-transfer' };
    const start = index * this.limits.chunkBytes;
    if (start >= parked.bytes.byteLength) return { missing: 'no-such-chunk' };
    const chunk = parked.bytes.subarray(start, start + this.limits.chunkBytes);
    parked.unread.delete(index);
    if (parked.unread.size === 0) this.free(transferId, 'read');
    return { chunk };
  }

  /** Resolves once nothing is parked (every reply read or expired). */
  whenEmpty(): Promise<void> {
    if (this.replies.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.emptied.push(resolve));
  }

  /** Frees everything still parked (the server is stopping: nobody can read it any more). */
  clear(): void {
    for (const transferId of [...this.replies.keys()]) this.free(transferId, 'stopped');
  }

  private free(transferId: string, end: ParkedEnd): void {
    const parked = this.replies.get(transferId);
    if (!parked) return;
    clearTimeout(parked.timer);
    this.replies.delete(transferId);
    this.bytes -= parked.bytes.byteLength;
    this.onEnd(parked.label, end, parked.bytes.byteLength);
    if (this.replies.size === 0) for (const resolve of this.emptied.splice(0)) resolve();
  }

  /** When the oldest parked reply expires at the latest: the soonest room can be expected. */
  private nextExpiryMs(): number {
    let soonest = Infinity;
    for (const parked of this.replies.values()) soonest = Math.min(soonest, parked.expiresAt);
    return Math.max(1, Math.ceil(soonest - Date.now()));
  }
}
