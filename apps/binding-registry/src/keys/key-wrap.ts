import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { AppHostError, RegistryReasons } from '@apphost/contracts';

/** AES-256-GCM under (a hash of) the host key: `iv(12) | tag(16) | ciphertext`. Unwrapping with another key fails closed. */
export function wrapKey(hostKey: Buffer, material: Buffer, keyId: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek(hostKey), iv);
  cipher.setAAD(Buffer.from(`apphost.key-ring.v1:${keyId}`));
  const body = Buffer.concat([cipher.update(material), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

export function unwrapKey(hostKey: Buffer, wrapped: Buffer, keyId: string): Buffer {
  try {
    const decipher = createDecipheriv('aes-256-gcm', kek(hostKey), wrapped.subarray(0, 12));
    decipher.setAAD(Buffer.from(`apphost.key-ring.v1:${keyId}`));
    decipher.setAuthTag(wrapped.subarray(12, 28));
    return Buffer.concat([decipher.update(wrapped.subarray(28)), decipher.final()]);
  } catch {
    throw new AppHostError('FAILED_PRECONDITION', `key ${keyId} cannot be unwrapped with the configured host key`, {
      details: RegistryReasons.details('KEY_UNWRAP_FAILED', { keyId }),
    });
  }
}

function kek(hostKey: Buffer): Buffer {
  return createHash('sha256').update('apphost.key-ring.kek.v1\n').update(hostKey).digest();
}
