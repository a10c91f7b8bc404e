import { headers as natsHeaders, type Msg, type MsgHdrs } from 'nats';

/**
 * Bus headers to and from the NATS wire without nats.js's `MsgHdrsImpl` (a Map of arrays, a validation and a key
 * scan per `set`, a string split and a second validation per header on decode): ~9 µs to build and encode the three
 * headers of a request and ~8 µs to decode them on this machine, most of a small request's client and server time.
 * The bytes are exactly the ones nats.js writes and reads (`nats-headers.spec.ts` pins both directions against it);
 * anything unusual (a key or value nats.js would refuse, a status line) takes nats.js's own path, errors included.
 */
const STATUS_LINE = 'NATS/1.0';
/** What nats.js accepts in a header key: printable ASCII except ':'. */
const VALID_KEY = /^[!-9;-~]+$/;
const LINE_BREAK = /[\r\n]/;

/** The headers of an outgoing message, as nats.js's `publish` consumes them (it only calls `encode()`). */
export function toNatsHeaders(values: Record<string, string>): MsgHdrs {
  let text = STATUS_LINE;
  let count = 0;
  for (const key in values) {
    const value = values[key];
    if (!VALID_KEY.test(key) || LINE_BREAK.test(value)) return viaNats(values);
    text += `\r\n${key}: ${value.trim()}`;
    count++;
  }
  if (count === 0) return viaNats(values);
  const bytes = Buffer.from(`${text}\r\n\r\n`, 'utf8');
  return { encode: () => bytes } as unknown as MsgHdrs;
}

function viaNats(values: Record<string, string>): MsgHdrs {
  const h = natsHeaders();
  for (const key in values) h.set(key, values[key]);
  return h;
}

/**
 * The headers of a received message, keys lower-cased, the first value of each key (what `MsgHdrs.get` returns).
 * Reads the raw header block nats.js keeps on the message (`_rdata` up to `_msg.hdr`); should that ever not be
 * there, or a line look unusual, it decodes through `msg.headers` as before.
 */
export function fromNatsMessage(msg: Msg): Record<string, string> {
  const impl = msg as unknown as { _msg?: { hdr?: unknown }; _rdata?: unknown };
  const hdr = impl._msg?.hdr;
  const data = impl._rdata;
  if (typeof hdr !== 'number' || (hdr > -1 && !(data instanceof Uint8Array))) return fromMsgHdrs(msg.headers);
  if (hdr < 0) return {};
  const block = data as Uint8Array;
  const lines = Buffer.from(block.buffer, block.byteOffset, hdr).toString('utf8').split('\r\n');
  if (lines[0] !== STATUS_LINE) return fromMsgHdrs(msg.headers); // a status (503 …): nats.js parses those
  const out: Record<string, string> = {};
  const seen: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (!line) continue;
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon);
    if (!VALID_KEY.test(key)) return fromMsgHdrs(msg.headers);
    if (seen.includes(key)) continue; // a repeated key: its first value stands
    seen.push(key);
    out[key.toLowerCase()] = line.slice(colon + 1).trim();
  }
  return out;
}

export function fromMsgHdrs(h: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  for (const key of h.keys()) out[key.toLowerCase()] = h.get(key);
  return out;
}
