import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { TEST_DATABASE_URL, dedicatedConnections } from '../test-support/pg';
import { ChannelWaiters } from './channel-waiters';

const channel = `apphost_cw_${randomBytes(4).toString('hex')}`;
const application = `channel-waiters-spec-${randomBytes(3).toString('hex')}`;
const database = dedicatedConnections(application);
const admin = new Client({ connectionString: TEST_DATABASE_URL });
const notify = (payload: string) => admin.query('SELECT pg_notify($1, $2)', [channel, payload]);
// Payloads of this spec are `ours:<key>`; anything else belongs to another store (or is garbage) and wakes nothing.
const keyOfPayload = (payload: string) => {
  const [owner, key] = JSON.parse(payload) as [string, string];
  return owner === 'ours' ? key : undefined;
};

beforeAll(() => admin.connect());
afterAll(() => admin.end());

describe('ChannelWaiters', () => {
  const waiters = new ChannelWaiters(database, channel, keyOfPayload, 60_000);
  afterAll(() => waiters.close());

  it('a NOTIFY wakes the waiters of its key only; foreign and malformed payloads wake nothing', async () => {
    const a = await waiters.nextChange('a', 60_000);
    const b = await waiters.nextChange('b', 60_000);
    let bWoke = false;
    void b.changed.then(() => (bWoke = true));
    await notify(JSON.stringify(['theirs', 'b']));
    await notify('not json');
    const started = Date.now();
    await notify(JSON.stringify(['ours', 'a']));
    await a.changed;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(bWoke).toBe(false);
    waiters.wake('b'); // a change made in this process wakes at once
    await b.changed;
  });

  it('every wait ends by its own bound or recheckMs, whichever is first, without any notification', async () => {
    const started = Date.now();
    await (
      await waiters.nextChange('quiet', 50)
    ).changed;
    waiters.recheckMs = 30;
    await (
      await waiters.nextChange('quiet', 60_000)
    ).changed;
    waiters.recheckMs = 60_000;
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('close wakes every waiter, stops listening and reports stopping', async () => {
    const own = new ChannelWaiters(database, channel, keyOfPayload, 60_000);
    const pending = await own.nextChange('x', 60_000);
    expect(own.stopping).toBe(false);
    await own.close();
    await pending.changed;
    expect(own.stopping).toBe(true);
  });
});
