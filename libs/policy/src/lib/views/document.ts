import { isUtf8 } from 'node:buffer';
import { AppHostError, GovernedReasons, type ByteReference } from '@apphost/contracts';
import { heldTextOf } from '../read-policy';
import { canonicalizeUri } from '../uri';

/** The MCP Apps document type (`RESOURCE_MIME_TYPE` of ext-apps). */
export const APP_DOCUMENT_MIME_TYPE = 'text/html;profile=mcp-app';

/**
 * The document inline (`html`), or held by its connection owner (`htmlLiteralReference`: the item's text as a JSON
 * string literal, answered by reference when the read asked for it), fetched once by whoever renders it and sent on
 * as it is, inside the JSON answer it belongs to.
 */
export type AppDocumentContent =
  | {
      /** Exactly the selected item's `text`, or its `blob` decoded as UTF-8 (a byte-order mark is kept). */
      html: string;
      htmlLiteralReference?: never;
    }
  | { html?: never; htmlLiteralReference: ByteReference };

export type AppDocument = AppDocumentContent & {
  /** UTF-8 length of the document. */
  bytes: number;
  /** The selected item's whole `_meta` (its `ui` member is the document's `_meta.ui`); undefined when absent or not an object. */
  itemMeta: Record<string, unknown> | undefined;
};

/**
 * The one App document of a `resources/read` response: the single item whose canonical URI is the expected one and
 * whose `mimeType` is the App type. Items of other URIs are ignored. Failures are FAILED_PRECONDITION
 * `DOCUMENT_NOT_FOUND` (none of that URI), `DOCUMENT_MIME_MISMATCH` (that URI, none of the App type),
 * `DOCUMENT_AMBIGUOUS` (several), `DOCUMENT_ENCODING_INVALID` (no string `text`, both `text` and `blob`, a blob that
 * is not strict base64 or not UTF-8), or PAYLOAD_TOO_LARGE `DOCUMENT_TOO_LARGE` (over `maxBytes` UTF-8 bytes).
 */
export function selectAppDocument(contents: readonly Record<string, unknown>[], expected: { resourceUri: string; maxBytes: number }): AppDocument {
  const resourceUri = canonicalizeUri(expected.resourceUri);
  const sameUri = contents.filter((item) => canonicalOrNull(item['uri']) === resourceUri);
  const documents = sameUri.filter((item) => isAppDocumentMimeType(item['mimeType']));
  if (documents.length === 0) {
    if (sameUri.length === 0) throw documentError('DOCUMENT_NOT_FOUND', `the response has no item of ${resourceUri}`, { resourceUri });
    const mimeTypes = sameUri.map((item) => (typeof item['mimeType'] === 'string' ? item['mimeType'] : null));
    throw documentError('DOCUMENT_MIME_MISMATCH', `no item of ${resourceUri} has type ${APP_DOCUMENT_MIME_TYPE}`, { resourceUri, mimeTypes });
  }
  if (documents.length > 1)
    throw documentError('DOCUMENT_AMBIGUOUS', `${documents.length} App documents of ${resourceUri}`, { resourceUri, count: documents.length });

  const item = documents[0];
  const meta = item['_meta'];
  const itemMeta = isRecord(meta) ? meta : undefined;
  if (item['textLiteralReference'] !== undefined) {
    const held = documentReference(item, resourceUri, expected.maxBytes);
    return { htmlLiteralReference: held.reference, bytes: held.bytes, itemMeta };
  }
  const html = documentText(item, resourceUri, expected.maxBytes);
  return { html, bytes: Buffer.byteLength(html, 'utf8'), itemMeta };
}

/**
 * Is this the App media type? Compared as RFC 9110 says media types compare: type, subtype and parameter name
 * case-insensitively, optional whitespace around `;`, the value exact (`mcp-app`, optionally quoted). Exactly one
 * parameter: `text/html` alone or with other parameters (`charset`) is another type.
 */
export function isAppDocumentMimeType(mimeType: unknown): boolean {
  if (typeof mimeType !== 'string') return false;
  const match = /^([^;\s]+)[ \t]*;[ \t]*([^=;\s]+)=("mcp-app"|mcp-app)[ \t]*$/.exec(mimeType);
  return match !== null && match[1].toLowerCase() === 'text/html' && match[2].toLowerCase() === 'profile';
}

/** A text the owner holds: alone in its item, well-formed as a reference with its length, within the size limit. */
function documentReference(item: Record<string, unknown>, resourceUri: string, maxBytes: number): { reference: ByteReference; bytes: number } {
  if (item['text'] !== undefined || item['blob'] !== undefined)
    throw documentError('DOCUMENT_ENCODING_INVALID', `the document of ${resourceUri} has a text reference and text or blob`, { resourceUri });
  const held = heldTextOf(item);
  if (!held) throw documentError('DOCUMENT_ENCODING_INVALID', `the document of ${resourceUri} has a malformed text reference`, { resourceUri });
  checkSize(held.bytes, resourceUri, maxBytes);
  return held;
}

function documentText(item: Record<string, unknown>, resourceUri: string, maxBytes: number): string {
  const { text, blob } = item;
  if (text !== undefined && blob !== undefined)
    throw documentError('DOCUMENT_ENCODING_INVALID', `the document of ${resourceUri} has both text and blob`, { resourceUri });
  if (typeof text === 'string') {
    checkSize(Buffer.byteLength(text, 'utf8'), resourceUri, maxBytes);
    return text;
  }
  if (typeof blob !== 'string' || !isStrictBase64(blob))
    throw documentError('DOCUMENT_ENCODING_INVALID', `the document of ${resourceUri} has no text and no valid base64 blob`, { resourceUri });
  // The decoded size is known from the length: refuse an oversized blob before decoding it.
  checkSize((blob.length / 4) * 3 - (blob.endsWith('==') ? 2 : blob.endsWith('=') ? 1 : 0), resourceUri, maxBytes);
  const html = appDocumentHtmlOf(Buffer.from(blob, 'base64'));
  if (html === null) throw documentError('DOCUMENT_ENCODING_INVALID', `the blob of ${resourceUri} is not UTF-8`, { resourceUri });
  return html;
}

/**
 * A document's bytes (a decoded `blob`) as its HTML: strict UTF-8, a byte-order
 * mark kept (it is content); null when the bytes are not UTF-8. Validated natively first (`isUtf8`, far cheaper than
 * a fatal `TextDecoder` on a large document), then decoded, which valid bytes make exact.
 */
export function appDocumentHtmlOf(bytes: Uint8Array): string | null {
  if (!isUtf8(bytes)) return null;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** RFC 4648 §4 base64, padded, no whitespace, no URL alphabet, zero pad bits (one text for one byte string). */
function isStrictBase64(value: string): boolean {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value)) return false;
  return Buffer.from(value, 'base64').toString('base64') === value;
}

function checkSize(bytes: number, resourceUri: string, maxBytes: number): void {
  if (bytes > maxBytes)
    throw new AppHostError('PAYLOAD_TOO_LARGE', `the document of ${resourceUri} is ${bytes} bytes, over the limit of ${maxBytes}`, {
      details: GovernedReasons.details('DOCUMENT_TOO_LARGE', { resourceUri, bytes, maxBytes }),
    });
}

function documentError(
  reason: 'DOCUMENT_NOT_FOUND' | 'DOCUMENT_AMBIGUOUS' | 'DOCUMENT_MIME_MISMATCH' | 'DOCUMENT_ENCODING_INVALID',
  message: string,
  extra: Record<string, unknown>,
): AppHostError {
  return new AppHostError('FAILED_PRECONDITION', message, { details: GovernedReasons.details(reason, extra) });
}

function canonicalOrNull(uri: unknown): string | null {
  if (typeof uri !== 'string') return null;
  try {
    return canonicalizeUri(uri);
  } catch {
    return null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
