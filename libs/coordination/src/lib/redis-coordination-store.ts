import { Redis } from 'ioredis';
import { AppHostError, type StoreReport } from '@apphost/contracts';
import type { Admission, AdmissionOutcome, CoordinationStore, SlotAcquisition } from './coordination-store';
import { redactText, redactUrl, secretsOf } from '@apphost/redact';
import {
  checkAdmission,
  checkCapacity,
  checkDelta,
  checkHolder,
  checkKey,
  checkKeyPrefix,
  checkName,
  checkTtl,
  checkValue,
  notAnInteger,
  notSlots,
  unavailable,
} from './validation';

export interface CoordinationLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface RedisCoordinationStoreOptions {
  /** `redis://` or `rediss://`; its password never appears in a message or a log line. */
  url: string;
  keyPrefix: string;
  name: string;
  /** Per-command deadline: a hung Redis fails the operation instead of stalling it. */
  commandTimeoutMs?: number;
  /** Bound on one connection attempt, and on how long `connect` waits for the first one. */
  connectTimeoutMs?: number;
  logger?: CoordinationLogger;
}

/** Reconnect delays double from 100 ms up to this cap, so a restarted Redis is picked up within about a second. */
const MAX_RECONNECT_DELAY_MS = 1000;

// The scripts act only while the key still holds the caller's value, atomically on the server.
const COMPARE_AND_DELETE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
const COMPARE_AND_EXPIRE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const COMPARE_AND_SET = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 else return 0 end`;
// A counter gets its TTL when it has none (PTTL -1: just created by INCRBY), so a window counter dies with its window.
const INCREMENT = `local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v`;
// Slots are a sorted set of holders scored by their expiry on the server's clock (one clock for every replica);
// a slot is live while the clock has not passed its score, as a key is live until its deadline has passed.
const SERVER_NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;
const ACQUIRE_SLOT = `${SERVER_NOW}
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
local held = redis.call('ZCARD', KEYS[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and held >= tonumber(ARGV[2]) then return {0, held} end
if redis.call('ZADD', KEYS[1], now + ttl, ARGV[1]) == 1 then held = held + 1 end
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return {1, held}`;
const RELEASE_SLOT = `${SERVER_NOW}
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
if tonumber(score) >= now then return 1 else return 0 end`;

// `admit`: KEYS are each window's current and previous counter, the slot, then the claim and the refusal counter
// when given; ARGV[1..3] the window count and whether a claim and a refusal counter are given, then four per
// window (limit, windowMs, elapsedMs, ttlMs), then the slot's holder, capacity and TTL, the claim's value and TTL,
// the refusal counter's TTL. A key of the wrong kind answers {'error', part, index} with nothing left counted.
const ADMIT = `${SERVER_NOW}
local w = tonumber(ARGV[1])
local s = 4 + 4 * w
local slotKey = KEYS[2 * w + 1]
local claimKey = ARGV[2] == '1' and KEYS[2 * w + 2] or nil
local refusalsKey = ARGV[3] == '1' and KEYS[2 * w + 2 + tonumber(ARGV[2])] or nil
local function giveBack(n) for j = 1, n do redis.call('DECRBY', KEYS[2 * j - 1], 1) end end
local function refused(reply)
  if refusalsKey and type(redis.pcall('INCRBY', refusalsKey, 1)) == 'number' and redis.call('PTTL', refusalsKey) == -1 then
    redis.call('PEXPIRE', refusalsKey, ARGV[s + 5])
  end
  return reply
end
for i = 1, w do
  local a = 4 + 4 * (i - 1)
  local current = redis.pcall('INCRBY', KEYS[2 * i - 1], 1)
  if type(current) ~= 'number' then giveBack(i - 1) return {'error', 'window', i - 1} end
  if redis.call('PTTL', KEYS[2 * i - 1]) == -1 then redis.call('PEXPIRE', KEYS[2 * i - 1], ARGV[a + 3]) end
  local read = redis.pcall('GET', KEYS[2 * i])
  local previous = read == false and 0 or tonumber(read)
  if type(previous) ~= 'number' then giveBack(i) return {'error', 'previous', i - 1} end
  local limit, windowMs, elapsedMs = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  if previous * (windowMs - elapsedMs) + current * windowMs > limit * windowMs then
    giveBack(i)
    return refused({'window', i - 1, previous, current - 1})
  end
end
local ttl = tonumber(ARGV[s + 2])
if type(redis.pcall('ZREMRANGEBYSCORE', slotKey, '-inf', '(' .. now)) ~= 'number' then giveBack(w) return {'error', 'slot', 0} end
local held = redis.call('ZCARD', slotKey)
if not redis.call('ZSCORE', slotKey, ARGV[s]) and held >= tonumber(ARGV[s + 1]) then
  giveBack(w)
  return refused({'slot', held})
end
local added = redis.call('ZADD', slotKey, now + ttl, ARGV[s])
if added == 1 then held = held + 1 end
if redis.call('PTTL', slotKey) < ttl then redis.call('PEXPIRE', slotKey, ttl) end
if claimKey and not redis.call('SET', claimKey, ARGV[s + 3], 'PX', ARGV[s + 4], 'NX') then
  if added == 1 then redis.call('ZREM', slotKey, ARGV[s]) held = held - 1 end
  return {'claim', held}
end
return {'admitted', held}`;

/** The client with the scripts registered by `defineCommand` (EVALSHA, falling back to EVAL after a restart). */
type ScriptedRedis = Redis & {
  apphostCompareAndDelete(key: string, expected: string): Promise<number>;
  apphostCompareAndExpire(key: string, expected: string, ttlMs: number): Promise<number>;
  apphostCompareAndSet(key: string, expected: string, value: string, ttlMs: number): Promise<number>;
  apphostIncrement(key: string, by: number, ttlMs: number): Promise<number>;
  apphostAcquireSlot(key: string, holder: string, capacity: number, ttlMs: number): Promise<[number, number]>;
  apphostReleaseSlot(key: string, holder: string): Promise<number>;
  apphostAdmit(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<(string | number)[]>;
};

/** The reply errors that are the caller's mistake (a key of another kind), not an outage; the memory store raises the same. */
const isNotAnInteger = (message: string) => /not an integer|out of range|overflow|WRONGTYPE/.test(message);
const isWrongType = (message: string) => /WRONGTYPE/.test(message);

/**
 * The production store on ioredis 5, built to fail closed and fast: no offline queue (a command while
 * disconnected rejects at once), a per-command timeout, a bounded connect, no resending of commands cut off by
 * a disconnect (they were already reported failed), and endless capped reconnects so it recovers on its own.
 */
export class RedisCoordinationStore implements CoordinationStore {
  readonly kind = 'redis' as const;
  private closed = false;

  private constructor(
    private readonly client: ScriptedRedis,
    private readonly keyPrefix: string,
    private readonly name: string,
    private readonly secrets: string[],
  ) {}

  /** Resolves once Redis is ready or the first attempt has failed: a store for a down Redis reports not ready. */
  static async connect(options: RedisCoordinationStoreOptions): Promise<RedisCoordinationStore> {
    const keyPrefix = checkKeyPrefix(options.keyPrefix);
    const name = checkName(options.name);
    const url = checkUrl(options.url);
    const commandTimeout = checkTimeout('commandTimeoutMs', options.commandTimeoutMs ?? 1000);
    const connectTimeout = checkTimeout('connectTimeoutMs', options.connectTimeoutMs ?? 2000);
    const client = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      autoResendUnfulfilledCommands: false,
      commandTimeout,
      connectTimeout,
      // disconnect() on a socket that is already dead would otherwise hold the process for 2 s.
      disconnectTimeout: 250,
      // Commands issued in the same event-loop turn (a View call's concurrent reads, other requests' commands) go out
      // in one write: under load that is far fewer socket writes per operation; each command still answers alone.
      enableAutoPipelining: true,
      retryStrategy: (attempt) => Math.min(100 * 2 ** Math.min(attempt - 1, 10), MAX_RECONNECT_DELAY_MS),
    }) as ScriptedRedis;
    client.defineCommand('apphostCompareAndDelete', { numberOfKeys: 1, lua: COMPARE_AND_DELETE });
    client.defineCommand('apphostCompareAndExpire', { numberOfKeys: 1, lua: COMPARE_AND_EXPIRE });
    client.defineCommand('apphostCompareAndSet', { numberOfKeys: 1, lua: COMPARE_AND_SET });
    client.defineCommand('apphostIncrement', { numberOfKeys: 1, lua: INCREMENT });
    client.defineCommand('apphostAcquireSlot', { numberOfKeys: 1, lua: ACQUIRE_SLOT });
    client.defineCommand('apphostReleaseSlot', { numberOfKeys: 1, lua: RELEASE_SLOT });
    client.defineCommand('apphostAdmit', { lua: ADMIT });
    const store = new RedisCoordinationStore(client, keyPrefix, name, secretsOf(url));
    store.watch(redactUrl(url), options.logger);
    await store.firstAttempt(connectTimeout);
    return store;
  }

  async ping(): Promise<boolean> {
    if (this.client.status !== 'ready') return false;
    try {
      return (await this.client.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    const k = this.key(key);
    checkValue(value);
    checkTtl(ttlMs);
    return (await this.run('setIfAbsent', () => this.client.set(k, value, 'PX', ttlMs, 'NX'))) === 'OK';
  }

  async get(key: string): Promise<string | null> {
    const k = this.key(key);
    return this.run('get', () => this.client.get(k));
  }

  async compareAndDelete(key: string, expected: string): Promise<boolean> {
    const k = this.key(key);
    checkValue(expected);
    return (await this.run('compareAndDelete', () => this.client.apphostCompareAndDelete(k, expected))) === 1;
  }

  async compareAndExpire(key: string, expected: string, ttlMs: number): Promise<boolean> {
    const k = this.key(key);
    checkValue(expected);
    checkTtl(ttlMs);
    return (await this.run('compareAndExpire', () => this.client.apphostCompareAndExpire(k, expected, ttlMs))) === 1;
  }

  async compareAndSet(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    const k = this.key(key);
    checkValue(expected);
    checkValue(value);
    checkTtl(ttlMs);
    return (await this.run('compareAndSet', () => this.client.apphostCompareAndSet(k, expected, value, ttlMs))) === 1;
  }

  async incrementFence(key: string): Promise<number> {
    const k = this.key(key);
    return this.run(
      'incrementFence',
      () => this.client.incr(k),
      (message) => (isNotAnInteger(message) ? notAnInteger(key) : undefined),
    );
  }

  async increment(key: string, by: number, ttlMs: number): Promise<number> {
    const k = this.key(key);
    checkDelta(by);
    checkTtl(ttlMs);
    return this.run(
      'increment',
      () => this.client.apphostIncrement(k, by, ttlMs),
      (message) => (isNotAnInteger(message) ? notAnInteger(key) : undefined),
    );
  }

  async acquireSlot(key: string, holder: string, capacity: number, ttlMs: number): Promise<SlotAcquisition> {
    const k = this.key(key);
    checkHolder(holder);
    checkCapacity(capacity);
    checkTtl(ttlMs);
    const [acquired, held] = await this.run(
      'acquireSlot',
      () => this.client.apphostAcquireSlot(k, holder, capacity, ttlMs),
      (message) => (isWrongType(message) ? notSlots(key) : undefined),
    );
    return { acquired: acquired === 1, held };
  }

  async releaseSlot(key: string, holder: string): Promise<boolean> {
    const k = this.key(key);
    checkHolder(holder);
    const released = await this.run(
      'releaseSlot',
      () => this.client.apphostReleaseSlot(k, holder),
      (message) => (isWrongType(message) ? notSlots(key) : undefined),
    );
    return released === 1;
  }

  async admit(admission: Admission): Promise<AdmissionOutcome> {
    const { windows, slot, claim, refusals } = checkAdmission(admission);
    const keys = [...windows.flatMap((w) => [this.key(w.key), this.key(w.previousKey)]), this.key(slot.key)];
    if (claim) keys.push(this.key(claim.key));
    if (refusals) keys.push(this.key(refusals.key));
    const args = [
      windows.length,
      claim ? 1 : 0,
      refusals ? 1 : 0,
      ...windows.flatMap((w) => [w.limit, w.windowMs, w.elapsedMs, w.ttlMs]),
      slot.holder,
      slot.capacity,
      slot.ttlMs,
      claim?.value ?? '',
      claim?.ttlMs ?? 1,
      refusals?.ttlMs ?? 1,
    ];
    const reply = await this.run('admit', () => this.client.apphostAdmit(keys.length, ...keys, ...args));
    return admissionOutcomeOf(reply, admission);
  }

  async keysWithPrefix(prefix: string): Promise<string[]> {
    const pattern = `${this.key(prefix).replace(/[*?[\]\\]/g, '\\$&')}*`;
    return this.run('keysWithPrefix', async () => {
      const found = new Set<string>();
      let cursor = '0';
      do {
        const [next, keys] = await this.client.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        for (const k of keys) found.add(k.slice(this.keyPrefix.length));
        cursor = next;
      } while (cursor !== '0');
      return [...found];
    });
  }

  async report(): Promise<StoreReport> {
    return { kind: 'redis', name: this.name, ready: await this.ping() };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // QUIT lets Redis close cleanly (and tells ioredis not to reconnect); without a live connection, or if
    // QUIT goes unanswered, disconnect drops the socket and cancels any pending reconnect.
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
        return;
      } catch {
        // Fall through to disconnect.
      }
    }
    this.client.disconnect();
  }

  private key(key: string): string {
    return this.keyPrefix + checkKey(key);
  }

  /** Runs a command only on a ready connection and turns every failure into UNAVAILABLE, redacted. */
  private async run<T>(operation: string, command: () => Promise<T>, callerError?: (message: string) => AppHostError | undefined): Promise<T> {
    if (this.closed) throw unavailable({ store: this.name, operation, cause: 'store is closed' });
    if (this.client.status !== 'ready') throw unavailable({ store: this.name, operation, cause: `connection is ${this.client.status}` });
    try {
      return await command();
    } catch (error) {
      const cause = redactText(error instanceof Error ? error.message : String(error), this.secrets);
      throw callerError?.(cause) ?? unavailable({ store: this.name, operation, cause });
    }
  }

  /** Logs each outage once when it starts and once when it ends, never each retry; ioredis needs an error listener. */
  private watch(url: string, logger: CoordinationLogger | undefined): void {
    let down = false;
    let cause = 'connection closed';
    this.client.on('error', (error: Error) => (cause = redactText(error.message, this.secrets)));
    this.client.on('close', () => {
      if (!down && !this.closed) logger?.warn({ store: this.name, url, cause }, 'coordination store unavailable');
      down = true;
      cause = 'connection closed';
    });
    this.client.on('ready', () => {
      if (down && !this.closed) logger?.info({ store: this.name, url }, 'coordination store recovered');
      down = false;
    });
  }

  private firstAttempt(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.client.off('ready', done).off('close', done);
        resolve();
      };
      // The margin lets ioredis' own connect timeout fire first and schedule its reconnect.
      const timer = setTimeout(done, timeoutMs + 100);
      this.client.once('ready', done).once('close', done);
      // Failure is reported through events; reconnecting continues in the background.
      this.client.connect().catch(() => undefined);
    });
  }
}

/** The script's reply as the port's outcome (a key of the wrong kind: FAILED_PRECONDITION, as the memory store raises it). */
function admissionOutcomeOf(reply: (string | number)[], admission: Admission): AdmissionOutcome {
  const [kind, a, b, c] = reply;
  switch (kind) {
    case 'admitted':
      return { admitted: true, held: Number(a) };
    case 'window':
      return { admitted: false, refusedBy: 'window', window: Number(a), previous: Number(b), current: Number(c) };
    case 'slot':
      return { admitted: false, refusedBy: 'slot', held: Number(a) };
    case 'claim':
      return { admitted: false, refusedBy: 'claim', held: Number(a) };
    default: {
      if (a === 'slot') throw notSlots(admission.slot.key);
      const window = admission.windows[Number(b)];
      throw notAnInteger((a === 'previous' ? window?.previousKey : window?.key) ?? '');
    }
  }
}

function checkUrl(url: unknown): string {
  let protocol = '';
  try {
    protocol = typeof url === 'string' ? new URL(url).protocol : '';
  } catch {
    // Reported below; the raw text is not echoed, as it may hold a password.
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') {
    throw new AppHostError('INVALID_ARGUMENT', 'url must be a redis:// or rediss:// URL', { details: { protocol } });
  }
  return url as string;
}

function checkTimeout(what: string, ms: number): number {
  if (!Number.isInteger(ms) || ms <= 0 || ms > 60_000) {
    throw new AppHostError('INVALID_ARGUMENT', `${what} must be a positive integer of at most 60000`, { details: { [what]: ms } });
  }
  return ms;
}
