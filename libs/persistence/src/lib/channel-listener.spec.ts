import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { TEST_DATABASE_URL, dedicatedConnections, sleep } from '../test-support/pg';
import { ChannelListener } from './channel-listener';

const channel = `apphost_cl_${randomBytes(4).toString('hex')}`;
const application = `channel-listener-spec-${randomBytes(3).toString('hex')}`;
const database = dedicatedConnections(application);
const admin = new Client({ connectionString: TEST_DATABASE_URL });

beforeAll(() => admin.connect());
afterAll(() => admin.end());

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

describe('ChannelListener', () => {
  it('delivers notifications, reports a dropped connection as a gap, and listens again', async () => {
    const payloads: string[] = [];
    let gaps = 0;
    const listener = new ChannelListener(
      database,
      channel,
      (p) => payloads.push(p),
      () => gaps++,
    );
    expect(listener.listening).toBe(false);
    await listener.start();
    expect(listener.listening).toBe(true);

    await admin.query('SELECT pg_notify($1, $2)', [channel, 'one']);
    await until(() => payloads.length === 1);
    expect(payloads).toEqual(['one']);

    // A terminated backend: the listener must say notifications may have been missed, then come back on its own.
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE $1', [`${application}:%`]);
    await until(() => gaps > 0);
    expect(listener.listening).toBe(false);
    await until(() => listener.listening);
    await admin.query('SELECT pg_notify($1, $2)', [channel, 'two']);
    await until(() => payloads.length === 2);
    expect(payloads).toEqual(['one', 'two']);

    await listener.close();
    expect(listener.listening).toBe(false);
    await admin.query('SELECT pg_notify($1, $2)', [channel, 'three']);
    await sleep(300);
    expect(payloads).toEqual(['one', 'two']);
    const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE $1', [`${application}:%`]);
    expect(rows[0].n).toBe(0);
  }, 20_000);

  it('refuses a channel name it would have to quote', () => {
    expect(
      () =>
        new ChannelListener(
          database,
          'bad; DROP',
          () => undefined,
          () => undefined,
        ),
    ).toThrow(/channel name/);
  });
});
