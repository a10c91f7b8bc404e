import type { ByteReference } from '@apphost/contracts';
import { JsonStringLiteral } from '@apphost/mcp';

type Hold = (label: string, bytes: Uint8Array) => ByteReference;

/**
 * The items of a `resources/read` answer with every text of `fromBytes` UTF-8 bytes or more replaced by a reference
 * to its JSON string literal, held in this process (`ConnReadResource.textReferenceFromBytes`): `textLiteralReference`,
 * with the text's UTF-8 length in `textBytes`. A long text read over stdio arrives as the server's own token
 * (`textLiteral`, never decoded) and is held as it is; any other text is encoded here. A literal carries any string
 * exactly (a lone surrogate stays an escape). Smaller texts stay inline, and so does the text of an item with a
 * `blob` too, so whoever selects from the answer refuses it as before.
 */
export function referenceLargeTexts(contents: readonly Record<string, unknown>[], fromBytes: number, hold: Hold): Record<string, unknown>[] {
  return contents.map((item) => {
    const { textLiteral, ...rest } = item;
    if (textLiteral instanceof JsonStringLiteral) {
      return textLiteral.utf8Bytes < fromBytes || 'blob' in item ? { ...rest, text: textLiteral.decode() } : referenced(rest, textLiteral, hold);
    }
    const { text, ...others } = item;
    if (typeof text !== 'string' || 'blob' in item || text.length * 3 < fromBytes || Buffer.byteLength(text, 'utf8') < fromBytes) return item;
    return referenced(others, JsonStringLiteral.fromText(text), hold);
  });
}

function referenced(item: Record<string, unknown>, literal: JsonStringLiteral, hold: Hold): Record<string, unknown> {
  return { ...item, textLiteralReference: hold('read-resource.text', literal.bytes), textBytes: literal.utf8Bytes };
}
