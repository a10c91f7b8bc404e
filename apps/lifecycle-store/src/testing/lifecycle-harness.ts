import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import pino from 'pino';
import { BusServer, NatsTransport } from '@apphost/bus';
import { AppHostError, cascadeParticipantContract, type CascadeOperation, type SessionKey } from '@apphost/contracts';
import { FAULT_POINTS, type FaultPoints } from '@apphost/runtime';
import {
  bootService,
  connectTestTransport,
  dropSchemasWithPrefix,
  latch,
  uniquePrefix,
  type Latch,
  type PostgresTarget,
  type ServiceUnderTest,
} from '@apphost/testing';
import type { LifecycleFaultPoint } from '../lifecycle.faults';
import { LifecycleRecovery } from '../lifecycle.module';
import { lifecycleStoreService } from '../service';

/** One call a participant received, stamped from the sequence its log shares with every other participant. */
export interface CascadeCall {
  seq: number;
  participant: string;
  operation: CascadeOperation;
  sessionId: string;
  incarnation: number;
}

/** One ordered record of the cascade calls of every participant that shares it (the order they were received in). */
export class CascadeCallLog {
  private seq = 0;
  readonly calls: CascadeCall[] = [];

  record(call: Omit<CascadeCall, 'seq'>): void {
    this.calls.push({ seq: ++this.seq, ...call });
  }

  of(sessionId: string): CascadeCall[] {
    return this.calls.filter((c) => c.sessionId === sessionId);
  }
}

/**
 * A deletion-cascade participant for tests: a BusServer of its own on a test service name, answering `revoke` and
 * `purge` with the real request shape, counting calls, and failing or stalling on demand.
 */
export class TestParticipant {
  readonly calls: { operation: CascadeOperation; sessionId: string; incarnation: number }[] = [];
  private failures: Partial<Record<CascadeOperation, number>> = {};
  private stalls: Partial<Record<CascadeOperation, Latch>> = {};

  private constructor(
    readonly name: string,
    private readonly transport: NatsTransport,
    private readonly server: BusServer,
    private readonly log: CascadeCallLog,
  ) {}

  /** `log` is shared by participants whose calls must be ordered against each other. */
  static async start(name: string, log = new CascadeCallLog()): Promise<TestParticipant> {
    const transport = await connectTestTransport(`test-participant-${name}`);
    const logger = pino({ level: 'silent' });
    const server = new BusServer({ transport, instanceId: `p${randomBytes(3).toString('hex')}`, queueGroup: name, logger });
    const participant = new TestParticipant(name, transport, server, log);
    for (const operation of ['revoke', 'purge'] as const) {
      server.register(cascadeParticipantContract(name, operation), async (req) => {
        participant.calls.push({ operation, sessionId: req.session.sessionId, incarnation: req.incarnation });
        log.record({ participant: name, operation, sessionId: req.session.sessionId, incarnation: req.incarnation });
        const stall = participant.stalls[operation];
        if (stall) {
          delete participant.stalls[operation];
          await stall.action();
        }
        if ((participant.failures[operation] ?? 0) > 0) {
          participant.failures[operation]!--;
          throw new AppHostError('UNAVAILABLE', `${name} ${operation} is failing on purpose`);
        }
        return {};
      });
    }
    server.start();
    await server.ready();
    return participant;
  }

  failNext(operation: CascadeOperation, times = 1): void {
    this.failures[operation] = times;
  }

  stallNext(operation: CascadeOperation): Latch {
    const l = latch();
    this.stalls[operation] = l;
    return l;
  }

  count(operation: CascadeOperation, sessionId: string, incarnation?: number): number {
    return this.calls.filter((c) => c.operation === operation && c.sessionId === sessionId && (incarnation === undefined || c.incarnation === incarnation))
      .length;
  }

  async stop(): Promise<void> {
    await this.server.stop(1000);
    await this.transport.close();
  }
}

/** One lifecycle-store under test on a target PostgreSQL, restartable on the same schema, with direct SQL access. */
export class LifecycleHarness {
  readonly prefix = uniquePrefix();
  service!: ServiceUnderTest;
  private db?: Client;
  private counter = 0;

  constructor(
    private readonly target: PostgresTarget,
    private readonly baseEnv: Record<string, string> = {},
  ) {}

  get schema(): string {
    return `${this.prefix}lifecycle_store`;
  }

  get client() {
    return this.service.client;
  }

  get faults(): FaultPoints<LifecycleFaultPoint> {
    return this.service.running.app.get<FaultPoints<LifecycleFaultPoint>>(FAULT_POINTS);
  }

  async start(env: Record<string, string> = {}): Promise<void> {
    this.service = await bootService(lifecycleStoreService, this.prefix, { DATABASE_URL: this.target.url, ...this.baseEnv, ...env });
  }

  /** A new service instance on the same schema (the "process" restarted); resolves after its recovery pass. */
  async restart(env: Record<string, string> = {}): Promise<void> {
    await this.service.stop();
    await this.start(env);
    await this.recovered();
  }

  recovered(): Promise<unknown> {
    return this.service.running.app.get(LifecycleRecovery).completion;
  }

  async stop(): Promise<void> {
    await this.service?.stop();
  }

  async cleanup(): Promise<void> {
    await this.db?.end();
    await dropSchemasWithPrefix(this.prefix, this.target.url);
  }

  key(label = 's'): SessionKey {
    return { tenant: 'acme', appName: 'dash', userId: 'alice', sessionId: `${label}-${++this.counter}-${randomBytes(3).toString('hex')}` };
  }

  async sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
    if (!this.db) {
      this.db = new Client({ connectionString: this.target.url });
      await this.db.connect();
    }
    await this.db.query(`SET search_path TO "${this.schema}"`);
    return (await this.db.query(text, params)).rows as T[];
  }

  /** A legacy session: a session row that no lifecycle record has adopted yet (as before the lifecycle migration). */
  async legacySession(label = 'legacy'): Promise<SessionKey> {
    const key = this.key(label);
    await this.sql(`INSERT INTO session_rows (tenant, app_name, user_id, session_id) VALUES ($1, $2, $3, $4)`, [
      key.tenant,
      key.appName,
      key.userId,
      key.sessionId,
    ]);
    return key;
  }

  async record(
    key: SessionKey,
  ): Promise<
    | { state: string; incarnation: number; version: number; creation_operation_id: string | null; adopted: boolean; adoption: unknown; cascade: unknown }
    | undefined
  > {
    const rows = await this.sql<{
      state: string;
      incarnation: string;
      version: string;
      creation_operation_id: string | null;
      adopted: boolean;
      adoption: unknown;
      cascade: unknown;
    }>(
      `SELECT state, incarnation, version, creation_operation_id, adopted, adoption, cascade FROM lifecycle_records WHERE tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`,
      [key.tenant, key.appName, key.userId, key.sessionId],
    );
    return rows[0] ? { ...rows[0], incarnation: Number(rows[0].incarnation), version: Number(rows[0].version) } : undefined;
  }

  /**
   * Moves a CREATING reservation `ms` into the past. The lease is measured by the database's clock (`now()` against
   * `reserved_at`), so this is how a test lets the lease lapse without waiting for it. Only the timestamp moves: the
   * record's version guard (a trigger) is bypassed for this one statement, as the record itself does not change.
   */
  async ageReservation(key: SessionKey, ms: number): Promise<void> {
    await this.sql('BEGIN');
    try {
      await this.sql(`SET LOCAL session_replication_role = replica`);
      const rows = await this.sql(
        `UPDATE lifecycle_records SET reserved_at = reserved_at - make_interval(secs => $5::float8 / 1000)
          WHERE tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4 AND state = 'CREATING' RETURNING 1`,
        [key.tenant, key.appName, key.userId, key.sessionId, ms],
      );
      if (rows.length !== 1) throw new Error(`no CREATING reservation for ${key.sessionId}`);
      await this.sql('COMMIT');
    } catch (error) {
      await this.sql('ROLLBACK');
      throw error;
    }
  }

  /** Resolves once a backend is blocked on a lock held inside this harness's schema (a row lock, a fence). */
  async blockedOnLock(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [row] = await this.sql<{ blocked: number }>(
        `SELECT count(*)::int AS blocked FROM pg_locks l
           JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace ns ON ns.oid = c.relnamespace
          WHERE ns.nspname = $1 AND cardinality(pg_blocking_pids(l.pid)) > 0`,
        [this.schema],
      );
      if (row.blocked > 0) return;
      if (Date.now() > deadline) throw new Error(`no backend blocked on a lock in ${this.schema} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  async sessionRows(key: SessionKey): Promise<{ incarnation: number | null; creation_operation_id: string | null; import_count: number }[]> {
    const rows = await this.sql<{ incarnation: string | null; creation_operation_id: string | null; import_count: number }>(
      `SELECT incarnation, creation_operation_id, import_count FROM session_rows WHERE tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`,
      [key.tenant, key.appName, key.userId, key.sessionId],
    );
    return rows.map((r) => ({ ...r, incarnation: r.incarnation === null ? null : Number(r.incarnation) }));
  }

  async eventRows(key: SessionKey): Promise<
    {
      incarnation: number;
      event_id: number;
      imported: boolean;
      audience: string | null;
      invocation_origin: string;
      emitter: string;
      immediate_caller: string | null;
    }[]
  > {
    const rows = await this.sql<{
      incarnation: string;
      event_id: string;
      imported: boolean;
      audience: string | null;
      invocation_origin: string;
      emitter: string;
      immediate_caller: string | null;
    }>(
      `SELECT incarnation, event_id, imported, audience, invocation_origin, emitter, immediate_caller FROM session_events
        WHERE tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4 ORDER BY incarnation, event_id`,
      [key.tenant, key.appName, key.userId, key.sessionId],
    );
    return rows.map((r) => ({ ...r, incarnation: Number(r.incarnation), event_id: Number(r.event_id) }));
  }
}

/** A participant name unique to this run (subjects `apphost.<name>.revoke.v1` / `.purge.v1`). */
export function participantName(label: string): string {
  return `tp-${randomBytes(4).toString('hex')}-${label}`;
}
