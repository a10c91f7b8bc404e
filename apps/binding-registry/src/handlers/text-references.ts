import type { ByteReference } from '@apphost/contracts';

type Hold = (label: string, bytes: Uint8Array) => ByteReference;

/**
 * The items of a `resources/read` answer with every large `text` replaced by a reference to its UTF-8 bytes, held in
 * this process (`ConnReadResource.textReferenceFromBytes`). Only a well-formed string is referenced: its UTF-8
 * bytes decode back to exactly the same text, where a lone surrogate would come back as U+FFFD. An item with both
 * `text` and `blob` stays as it is, so whoever selects from the answer refuses it as before.
 */
export function referenceLargeTexts(contents: readonly Record<string, unknown>[], fromBytes: number, hold: Hold): Record<string, unknown>[] {
  return contents.map((item) => {
    const { text, ...rest } = item;
    if (typeof text !== 'string' || 'blob' in item || text.length * 3 < fromBytes || !isWellFormed(text)) return item;
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.byteLength < fromBytes) return item;
    return { ...rest, textReference: hold('read-resource.text', bytes) };
  });
}

/** `String.prototype.isWellFormed` (Node 20; not in the ES2022 typings): no lone surrogate. */
function isWellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}
