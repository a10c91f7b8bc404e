import { AppHostError, byteReferenceSchema, CatalogReasons, type ByteReference } from '@apphost/contracts';
import { matchResourcePolicy, type ResourcePolicy } from './resource-policy';
import { canonicalizeUri } from './uri';

/* The resource policy of a `resources/read`, on the request and on every item of the answer. */

/** Byte limits of one read: per content item and over all of them. */
export interface ReadLimits {
  maxItemBytes: number;
  maxTotalBytes: number;
}

/** The requested URI, canonical, if the policy allows it (request side); a denial reveals nothing about the server. */
export function admitReadRequest(policy: ResourcePolicy, uri: string): string {
  const canonical = canonicalizeUri(uri);
  if (!matchResourcePolicy(policy, canonical)) {
    throw new AppHostError('PERMISSION_DENIED', 'the resource is outside the resource policy', {
      details: CatalogReasons.details('RESOURCE_POLICY_DENIED', { side: 'request' }),
    });
  }
  return canonical;
}

/**
 * Decoded size of a content item: UTF-8 bytes of `text` (or, for a text the owner holds, of the text its literal
 * holds: `textBytes` beside `textLiteralReference`), decoded bytes of base64 `blob`.
 */
export function itemBytes(item: Record<string, unknown>): number {
  const text = item['text'];
  const blob = item['blob'];
  let bytes = 0;
  if (item['textLiteralReference'] !== undefined) {
    const held = heldTextOf(item);
    if (!held) throw new AppHostError('INTERNAL', 'the connection owner answered a malformed text reference');
    bytes += held.bytes;
  }
  if (typeof text === 'string') bytes += Buffer.byteLength(text, 'utf8');
  if (typeof blob === 'string') bytes += Math.floor((blob.replace(/=+$/, '').length * 3) / 4);
  return bytes;
}

/**
 * A text the connection owner holds (`textLiteralReference` and `textBytes`), read as one: the reference and the
 * text's UTF-8 length, or undefined when either is malformed or the length cannot fit in its literal (at least its
 * bytes and two quotes).
 */
export function heldTextOf(item: Record<string, unknown>): { reference: ByteReference; bytes: number } | undefined {
  const reference = byteReferenceSchema.safeParse(item['textLiteralReference']);
  const bytes = item['textBytes'];
  if (!reference.success || typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0 || bytes > reference.data.totalBytes - 2) return undefined;
  return { reference: reference.data, bytes };
}

/**
 * Response-side policy: every returned item must carry a URI that canonicalizes and matches the policy; one item
 * that does not rejects the whole response (never a filtered subset). Per-item and aggregate byte limits.
 * Returns the items with canonical URIs.
 */
export function checkReadResponse(
  policy: ResourcePolicy,
  contents: readonly Record<string, unknown>[],
  limits: ReadLimits,
): { contents: Record<string, unknown>[]; totalBytes: number } {
  const denied: { index: number; why: string }[] = [];
  const out: Record<string, unknown>[] = [];
  let total = 0;
  contents.forEach((item, index) => {
    const raw = item['uri'];
    let canonical: string | undefined;
    if (typeof raw === 'string') {
      try {
        canonical = canonicalizeUri(raw);
      } catch {
        canonical = undefined;
      }
    }
    if (canonical === undefined) denied.push({ index, why: 'URI_INVALID' });
    else if (!matchResourcePolicy(policy, canonical)) denied.push({ index, why: 'OUTSIDE_POLICY' });
    const bytes = itemBytes(item);
    if (bytes > limits.maxItemBytes) {
      throw new AppHostError('PAYLOAD_TOO_LARGE', `content item ${index} has ${bytes} bytes, over ${limits.maxItemBytes}`, {
        details: CatalogReasons.details('READ_ITEM_TOO_LARGE', { index }),
      });
    }
    total += bytes;
    out.push({ ...item, ...(canonical ? { uri: canonical } : {}) });
  });
  if (denied.length) {
    throw new AppHostError(
      'PERMISSION_DENIED',
      `${denied.length} of ${contents.length} returned content items are outside the resource policy: the whole response is rejected`,
      {
        details: CatalogReasons.details('RESOURCE_POLICY_DENIED', { side: 'response', mixed: denied.length < contents.length, denied }),
      },
    );
  }
  if (total > limits.maxTotalBytes) {
    throw new AppHostError('PAYLOAD_TOO_LARGE', `the response has ${total} bytes of content, over ${limits.maxTotalBytes}`, {
      details: CatalogReasons.details('READ_TOTAL_TOO_LARGE'),
    });
  }
  return { contents: out, totalBytes: total };
}
