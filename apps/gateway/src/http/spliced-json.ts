import { randomUUID } from 'node:crypto';
import { StreamableFile } from '@nestjs/common';

/**
 * A JSON answer with one string value sent as ready-made literal bytes (a JSON string token, quotes included): the
 * answer is serialized with a marker in that value's place, and the literal is spliced in where the marker's one
 * occurrence is. The marker is random per answer, so no other value of it can be the marker.
 */
export interface JsonSplice {
  marker: string;
  literal: Uint8Array;
}

export function spliceMarker(): string {
  return `apphost-splice-${randomUUID()}`;
}

/** `value` serialized, the marker replaced by the literal: a body Nest sends as it is, with its length. */
export function splicedJson(value: unknown, splice: JsonSplice): StreamableFile {
  const text = JSON.stringify(value);
  const quoted = `"${splice.marker}"`;
  const at = text.indexOf(quoted);
  if (at < 0 || text.includes(quoted, at + quoted.length)) throw new Error('splicedJson: the marker must occur exactly once in the value');
  const body = Buffer.concat([Buffer.from(text.slice(0, at), 'utf8'), splice.literal, Buffer.from(text.slice(at + quoted.length), 'utf8')]);
  return new StreamableFile(body, { type: 'application/json; charset=utf-8' });
}
