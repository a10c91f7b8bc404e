import type { Client, Notification } from 'pg';
import type { ServiceDatabase } from './service-database';

/** Pause before re-opening a dropped LISTEN connection, so a server that refuses is not hammered. */
const RELISTEN_DELAY_MS = 250;

/**
 * One LISTEN connection of a process on one PostgreSQL channel, for caches that must drop what they hold when
 * another replica changes it. `onNotification` gets each payload; `onGap` runs whenever notifications may have been
 * missed (the connection dropped, or it is not listening yet), so the cache treats itself as stale: while
 * `listening` is false nothing can be trusted to arrive. A dropped connection is re-opened after a short pause for as
 * long as the listener is open.
 */
export class ChannelListener {
  private client?: Client;
  private timer?: NodeJS.Timeout;
  private closed = false;
  private active = false;

  constructor(
    private readonly database: Pick<ServiceDatabase, 'dedicatedConnection'>,
    private readonly channel: string,
    private readonly onNotification: (payload: string) => void,
    private readonly onGap: () => void,
  ) {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a plain channel name: ${channel}`);
  }

  /** True while LISTEN is in effect on a live connection: until then every notification may be missed. */
  get listening(): boolean {
    return this.active;
  }

  /** Opens the connection and LISTENs; a failure is not thrown (the cache stays stale and a retry is scheduled). */
  async start(): Promise<void> {
    if (this.closed || this.client) return;
    const client = this.database.dedicatedConnection(`listen-${this.channel}`);
    this.client = client;
    let dropped = false;
    const drop = () => {
      if (dropped) return;
      dropped = true;
      this.active = false;
      if (this.client === client) this.client = undefined;
      this.onGap();
      void client.end().catch(() => undefined);
      this.retry();
    };
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', (n: Notification) => {
      if (n.channel === this.channel && n.payload !== undefined) this.onNotification(n.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      if (!dropped) this.active = true;
    } catch {
      drop();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.active = false;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private retry(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.start();
    }, RELISTEN_DELAY_MS);
    this.timer.unref();
  }
}
