import { headers as natsHeaders, MsgHdrsImpl, type Msg } from 'nats';
import { fromMsgHdrs, fromNatsMessage, toNatsHeaders } from './nats-headers';

const CASES: Record<string, string>[] = [
  { 'apphost-correlation-id': 'c-1', 'apphost-deadline': '1767225600000', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  { 'apphost-reply': 'transfer' },
  { 'Mixed-Case': '  padded value  ', other: 'ü nicode' },
];

/** A received message as nats.js builds it: the header block then the payload in `_rdata`, `_msg.hdr` its length. */
function received(block: Uint8Array | undefined, payload = new Uint8Array([1, 2])): Msg {
  const rdata = block ? Buffer.concat([block, payload]) : payload;
  const hdr = block ? block.byteLength : -1;
  return {
    _msg: { hdr },
    _rdata: rdata,
    get headers() {
      return block ? MsgHdrsImpl.decode(block) : undefined;
    },
  } as unknown as Msg;
}

function viaNats(values: Record<string, string>): Uint8Array {
  const h = natsHeaders();
  for (const key in values) h.set(key, values[key]);
  return (h as MsgHdrsImpl).encode();
}

describe('NATS header codec', () => {
  it.each(CASES)('encodes exactly the bytes nats.js writes (%o)', (values) => {
    expect(Buffer.from((toNatsHeaders(values) as MsgHdrsImpl).encode())).toEqual(Buffer.from(viaNats(values)));
  });

  it.each(CASES)('decodes exactly what nats.js decodes (%o)', (values) => {
    const block = viaNats(values);
    expect(fromNatsMessage(received(block))).toEqual(fromMsgHdrs(MsgHdrsImpl.decode(block)));
  });

  it('keeps the first value of a repeated key, as MsgHdrs.get does', () => {
    const block = Buffer.from('NATS/1.0\r\nk: one\r\nk: two\r\nK: three\r\n\r\n');
    expect(fromNatsMessage(received(block))).toEqual(fromMsgHdrs(MsgHdrsImpl.decode(block)));
    expect(fromNatsMessage(received(block))).toEqual({ k: 'three' });
  });

  it('reads a message without headers as none', () => {
    expect(fromNatsMessage(received(undefined))).toEqual({});
  });

  it('leaves a status line (no responders) to nats.js', () => {
    const block = Buffer.from('NATS/1.0 503\r\n\r\n');
    expect(fromNatsMessage(received(block))).toEqual(fromMsgHdrs(MsgHdrsImpl.decode(block)));
  });

  it('refuses what nats.js refuses, with its error', () => {
    expect(() => toNatsHeaders({ 'bad key': 'v' })).toThrow(/not a valid character/);
    expect(() => toNatsHeaders({ k: 'a\r\nInjected: 1' })).toThrow(/invalid header value/);
  });
});
