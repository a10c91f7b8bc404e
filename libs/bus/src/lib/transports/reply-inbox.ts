import { createInbox, nuid, type Msg, type MsgHdrs, type NatsConnection } from 'nats';
import { TransportError } from './transport';

interface Pending {
  resolve(msg: Msg): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * Request-reply on one wildcard inbox subscription per connection (`_INBOX.<nuid>.*`), with the semantics of
 * nats.js's multiplexed `nc.request`: a reply is matched by its token, "no responders" is the server's empty 503
 * status message (reported at once), a request without a reply by `timeoutMs` times out. Why not `nc.request`: for
 * every request it answers, nats.js builds a `NatsError` it throws away (its `RequestOne.resolver` calls `cancel()`,
 * which constructs a "cancelled" error with a stack trace for an already settled promise) and races two promises;
 * that was ~1.5 % of a whole plane's CPU. The subscription is the client's like any other: nats.js re-subscribes it
 * after a reconnect, so a reply that arrives after one still finds its request.
 */
export class ReplyInbox {
  private readonly prefix: string;
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly nc: NatsConnection) {
    this.prefix = `${createInbox()}.`;
    nc.subscribe(`${this.prefix}*`, { callback: (err, msg) => (err ? this.failAll(err) : this.dispatch(msg)) });
    // A closed connection delivers nothing more: every request still waiting was published and may have run.
    void nc.closed().then(() => this.failAll(new Error('the NATS connection closed with the request in flight')));
  }

  /**
   * Publishes `data` at once with a reply subject of its own; resolves with the reply or rejects with a
   * `TransportError`. (Deferring requests to the end of the turn, like replies, saved no socket write in the benches:
   * requests issued together already share nats.js's microtask flush.)
   */
  request(subject: string, data: Uint8Array, timeoutMs: number, headers: MsgHdrs | undefined): Promise<Msg> {
    const token = nuid.next();
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(token);
        reject(new TransportError('timeout', 'request timed out'));
      }, timeoutMs);
      this.pending.set(token, { resolve, reject, timer });
      try {
        this.nc.publish(subject, data, { reply: this.prefix + token, headers });
      } catch (error) {
        clearTimeout(timer);
        this.pending.delete(token);
        reject(error);
      }
    });
  }

  private dispatch(msg: Msg): void {
    const token = msg.subject.startsWith(this.prefix) ? msg.subject.slice(this.prefix.length) : undefined;
    const waiting = token === undefined ? undefined : this.pending.get(token);
    if (!waiting || token === undefined) return; // late (timed out) or foreign: nobody waits for it
    this.pending.delete(token);
    clearTimeout(waiting.timer);
    // NATS core reports "no responders" as an empty message with status 503 (nats.js's `isRequestError`).
    if (msg.data.length === 0 && msg.headers?.code === 503) waiting.reject(new TransportError('no-responders', 'no responders for subject'));
    else waiting.resolve(msg);
  }

  private failAll(error: Error): void {
    for (const [token, waiting] of this.pending) {
      this.pending.delete(token);
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
  }
}
