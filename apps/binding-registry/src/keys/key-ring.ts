import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppHostError, RegistryReasons } from '@apphost/contracts';
import type { ChannelListener } from '@apphost/persistence';
import type { Logger } from '@apphost/runtime';
import type { KeyRow, KeysRepository } from '../store/keys.repository';
import { unwrapKey, wrapKey } from './key-wrap';

const DIGEST_VERSION = 'v1';
const REVISION_PATTERN = /^v1\.([A-Za-z0-9_-]{1,64})\.([0-9a-f]{64})$/;

interface LoadedKey {
  keyId: string;
  state: 'ACTIVE' | 'VERIFYING' | 'RETIRED';
  material: Buffer | null;
  verifyUntil: number | null;
}

export interface KeyRingStatus {
  activeKeyId: string;
  verifyingKeyIds: string[];
  retiredKeyIds: string[];
}

/**
 * The host key ring: HMAC keys for `bindingRevision` and security-domain keys, persisted in the registry's
 * schema (wrapped under REGISTRY_HOST_KEY when configured) so every replica agrees. Signing always uses the
 * ring's current ACTIVE key; verification accepts ACTIVE and in-window VERIFYING keys only. A retired or unknown
 * key fails closed. Material never leaves this class.
 *
 * `derive` reuses the loaded ring while it cannot be stale: a rotation on any replica notifies `KEY_RING_CHANNEL` in its
 * transaction (delivered at commit) and every replica's listener invalidates its copy; while the listener is not
 * listening (not yet connected, dropped, none given) every use reloads; and the first use after a VERIFYING key's
 * window ends reloads too, which retires it in the store and erases its material there.
 */
export class KeyRing {
  private keys = new Map<string, LoadedKey>();
  /** Bumped by every notification and every listener gap; the loaded ring is fresh only if none came since. */
  private invalidations = 0;
  private loadedAt = -1;
  private reloadBy = 0;

  constructor(
    private readonly repository: KeysRepository,
    private readonly hostKey: Buffer | undefined,
    private readonly verifyWindowMs: number,
    private readonly logger: Logger,
    private readonly listener?: Pick<ChannelListener, 'listening'>,
  ) {}

  /** The store's ring may have changed (a rotation notified, or notifications may have been missed). */
  invalidate(): void {
    this.invalidations++;
  }

  /** Loads the ring, creating the first key if it is empty; a key that cannot be unwrapped stops startup. */
  async init(): Promise<void> {
    if (!this.hostKey) this.logger.warn('REGISTRY_HOST_KEY is not set: the key ring is stored unwrapped (development only)');
    await this.reload();
    if (this.keys.size === 0) {
      const keyId = newKeyId();
      const material = randomBytes(32);
      await this.repository.insertFirst(keyId, this.protect(keyId, material), this.hostKey !== undefined);
      await this.reload();
    }
    this.active(); // throws when the ring has no usable active key
  }

  async reload(): Promise<void> {
    const seen = this.invalidations;
    const listening = this.listener?.listening === true;
    await this.repository.retireExpired();
    const next = new Map<string, LoadedKey>();
    for (const row of await this.repository.all()) next.set(row.keyId, this.load(row));
    this.keys = next;
    this.loadedAt = listening ? seen : -1;
    const windows = [...next.values()].filter((k) => k.state === 'VERIFYING' && k.verifyUntil !== null).map((k) => k.verifyUntil as number);
    this.reloadBy = Math.min(Number.POSITIVE_INFINITY, ...windows);
  }

  /** The ring as the store holds it now: the loaded one while nothing can have changed it, else reloaded. */
  private async current(): Promise<void> {
    const fresh = this.loadedAt === this.invalidations && this.listener?.listening === true && Date.now() < this.reloadBy;
    if (!fresh) await this.reload();
  }

  async rotate(): Promise<KeyRingStatus> {
    await this.reload();
    const current = this.active();
    const keyId = newKeyId();
    const rotated = await this.repository.rotate(current.keyId, keyId, this.protect(keyId, randomBytes(32)), this.hostKey !== undefined, this.verifyWindowMs);
    if (!rotated)
      throw new AppHostError('CONFLICT', 'another rotation changed the active key; retry', { details: RegistryReasons.details('KEY_ROTATION_RACE') });
    await this.reload();
    this.logger.info({ activeKeyId: keyId, previousKeyId: current.keyId, verifyWindowMs: this.verifyWindowMs }, 'key ring rotated');
    return this.status();
  }

  status(): KeyRingStatus {
    const all = [...this.keys.values()];
    return {
      activeKeyId: this.active().keyId,
      verifyingKeyIds: all.filter((k) => k.state === 'VERIFYING').map((k) => k.keyId),
      retiredKeyIds: all.filter((k) => k.state === 'RETIRED').map((k) => k.keyId),
    };
  }

  /** `v1.<keyId>.<hex HMAC-SHA256>` over a purpose-tagged digest, with the current active key. */
  async sign(purpose: string, digest: string): Promise<string> {
    // Binding revisions are signed rarely (bind, rebind) and must use the key that is ACTIVE now, even in the moment
    // before another replica's rotation notice arrives: always re-read.
    await this.reload();
    const key = this.active();
    return `${DIGEST_VERSION}.${key.keyId}.${mac(key.material, purpose, digest)}`;
  }

  /** Checks a value made by `sign`; a missing, retired or expired key is FAILED_PRECONDITION (fail closed). */
  async verify(purpose: string, digest: string, signed: string): Promise<{ valid: boolean; keyId: string; active: boolean }> {
    const parsed = REVISION_PATTERN.exec(signed);
    if (!parsed) throw new AppHostError('INVALID_ARGUMENT', 'not a v1 keyed digest', { details: RegistryReasons.details('DIGEST_VERSION_UNKNOWN') });
    const keyId = parsed[1];
    let key = this.keys.get(keyId);
    if (!key || !this.usable(key)) {
      await this.reload(); // another replica may have rotated
      key = this.keys.get(keyId);
    }
    if (!key)
      throw new AppHostError('FAILED_PRECONDITION', `key ${keyId} is not in the key ring`, { details: RegistryReasons.details('KEY_UNKNOWN', { keyId }) });
    if (!this.usable(key) || !key.material)
      throw new AppHostError('FAILED_PRECONDITION', `key ${keyId} is retired`, { details: RegistryReasons.details('KEY_RETIRED', { keyId }) });
    const expected = Buffer.from(mac(key.material, purpose, digest), 'hex');
    const given = Buffer.from(parsed[2], 'hex');
    return { valid: expected.length === given.length && timingSafeEqual(expected, given), keyId, active: key.state === 'ACTIVE' };
  }

  /**
   * An opaque, host-keyed value (security-domain keys): never reversible to its input. Derived on every acquire, so
   * from the loaded ring: in the moment before a rotation notice arrives it may still use the key just demoted,
   * which only keeps a principal on its pre-rotation domain (its own) a little longer.
   */
  async derive(purpose: string, input: string): Promise<string> {
    await this.current();
    return mac(this.active().material, purpose, input);
  }

  private usable(key: LoadedKey): boolean {
    if (key.state === 'ACTIVE') return key.material !== null;
    return key.state === 'VERIFYING' && key.material !== null && key.verifyUntil !== null && key.verifyUntil > Date.now();
  }

  private active(): LoadedKey & { material: Buffer } {
    const active = [...this.keys.values()].find((k) => k.state === 'ACTIVE');
    if (!active?.material)
      throw new AppHostError('FAILED_PRECONDITION', 'the key ring has no active key', { details: RegistryReasons.details('KEY_RING_EMPTY') });
    return { ...active, material: active.material };
  }

  private protect(keyId: string, material: Buffer): Buffer {
    return this.hostKey ? wrapKey(this.hostKey, material, keyId) : material;
  }

  private load(row: KeyRow): LoadedKey {
    let material: Buffer | null = null;
    if (row.material) {
      if (row.wrapped && !this.hostKey) {
        throw new AppHostError('FAILED_PRECONDITION', `key ${row.keyId} is wrapped but REGISTRY_HOST_KEY is not set`, {
          details: RegistryReasons.details('KEY_UNWRAP_FAILED', { keyId: row.keyId }),
        });
      }
      material = row.wrapped && this.hostKey ? unwrapKey(this.hostKey, row.material, row.keyId) : row.material;
    }
    return { keyId: row.keyId, state: row.state, material, verifyUntil: row.verifyUntil ? row.verifyUntil.getTime() : null };
  }
}

function mac(material: Buffer, purpose: string, value: string): string {
  return createHmac('sha256', material).update(`apphost.keyed.v1\n${purpose}\n`).update(value).digest('hex');
}

function newKeyId(): string {
  return `k${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
}
