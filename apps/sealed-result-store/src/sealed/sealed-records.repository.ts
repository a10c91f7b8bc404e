import type { SessionKey } from '@apphost/contracts';
import type { Database } from '@apphost/persistence';

/**
 * Every SQL statement of the store. Each mutating statement is guarded in its own WHERE clause (never a read
 * followed by a blind write), and the immutable create reads back a conflicting row in a second statement (a
 * read-back inside the inserting statement cannot see a concurrently committed row: it reads the statement's snapshot).
 */

export interface NewRecord {
  recordId: string;
  operationInstanceId: string;
  session: SessionKey;
  incarnation: number;
  functionCallId: string;
  schemaVersion: number;
  digest: Buffer;
  chunkBytes: number;
  chunkDigests: Buffer;
  body: Buffer;
  pendingTtlMs: number;
}

/** What the create path compares when the operation instance already exists (never leaves the service). */
export interface ExistingRecord {
  recordId: string;
  session: SessionKey;
  incarnation: number;
  functionCallId: string;
  schemaVersion: number;
  state: 'PENDING' | 'COMMITTED';
  digest: Buffer;
}

export interface RecordKeyParams {
  session: SessionKey;
  incarnation: number;
  functionCallId: string;
  recordId: string;
  eventId: string;
}

export interface ResolvedRow {
  minLive: number | null;
  record: null | {
    /** The state before this resolve; a PENDING record was bound to the event iff `bound`. */
    state: 'PENDING' | 'COMMITTED';
    bound: boolean;
    schemaVersion: number;
    digest: Buffer;
    chunkBytes: number;
    chunkDigests: Buffer;
    sizeBytes: number;
    body: Buffer;
    /** The same bytes as UTF-8 text, when the database sent them as text (the usual case). */
    text: string | undefined;
  };
}

export interface ChunkRow {
  minLive: number | null;
  record: null | { sizeBytes: number; chunkBytes: number; part: Buffer | null; chunkDigest: Buffer | null };
}

export interface UploadRow {
  uploadId: string;
  operationInstanceId: string;
  session: SessionKey;
  incarnation: number;
  functionCallId: string;
  totalBytes: number;
  chunkBytes: number;
  chunkCount: number;
  pendingTtlMs: number;
}

const sessionParams = (s: SessionKey): string[] => [s.tenant, s.appName, s.userId, s.sessionId];
const toNumber = (v: string | number | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));

// $1..$4 are always the session key, $5 the incarnation, in every keyed statement below.
const SESSION_MATCH = (alias: string) => `${alias}.tenant = $1 AND ${alias}.app_name = $2 AND ${alias}.user_id = $3 AND ${alias}.session_id = $4`;
/** The full record key ($6 record id, $7 function call): the primary key plus the function call. */
const RECORD_KEY_MATCH = (alias: string) =>
  `${SESSION_MATCH(alias)} AND ${alias}.incarnation = $5 AND ${alias}.record_id = $6 AND ${alias}.function_call_id = $7`;

/** Raises the session's floor to `minLive` (never lowers it) and returns the floor now in force; locks the row. */
const RAISE_FLOOR = `
  INSERT INTO session_incarnations AS s (tenant, app_name, user_id, session_id, min_live) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (tenant, app_name, user_id, session_id) DO UPDATE SET min_live = GREATEST(s.min_live, EXCLUDED.min_live)
  RETURNING s.min_live`;

/**
 * The create path's floor step: like RAISE_FLOOR, but writes no new row version when the floor already equals
 * `$5` (every create after the first of an incarnation). ON CONFLICT DO UPDATE locks the conflicting row (its
 * latest version) whether or not the WHERE holds, so the lock that serializes create against purge/revoke is
 * unchanged; only the redundant tuple version (WAL, HOT chain) goes away. RETURNING yields a row iff the floor
 * was inserted or its latest version differed from `$5`: no row means the floor in force is exactly `$5`.
 */
const RAISE_FLOOR_FOR_CREATE = `
  INSERT INTO session_incarnations AS s (tenant, app_name, user_id, session_id, min_live) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (tenant, app_name, user_id, session_id) DO UPDATE SET min_live = GREATEST(s.min_live, EXCLUDED.min_live)
    WHERE s.min_live <> EXCLUDED.min_live
  RETURNING s.min_live`;

/** SQLSTATE character_not_in_repertoire: `convert_from` met bytes that are not valid UTF-8. */
const INVALID_UTF8 = '22021';

interface ResolveSqlRow {
  min_live: string | null;
  state: 'PENDING' | 'COMMITTED' | null;
  bound: boolean;
  schema_version: number;
  digest: Buffer;
  chunk_bytes: number;
  chunk_digests: Buffer;
  size_bytes: number;
  body: string | Buffer | null;
}

/** The resolve statement (see `findForResolve`), with the record's body as `body` (alias `b`). */
const RESOLVE_SQL = (body: string) => `WITH bind AS (
         UPDATE sealed_records r SET state = 'COMMITTED', event_id = $8, committed_at = now()
         WHERE ${RECORD_KEY_MATCH('r')} AND r.state = 'PENDING'
           AND NOT EXISTS (SELECT 1 FROM session_incarnations s WHERE ${SESSION_MATCH('s')} AND s.min_live > $5)
         RETURNING r.schema_version, r.digest, r.chunk_bytes, r.chunk_digests, r.size_bytes, r.body)
       SELECT NULL::bigint AS min_live, 'PENDING' AS state, true AS bound,
              b.schema_version, b.digest, b.chunk_bytes, b.chunk_digests, b.size_bytes, ${body} AS body
       FROM bind b
       UNION ALL
       SELECT s.min_live, b.state, false, b.schema_version, b.digest, b.chunk_bytes, b.chunk_digests, b.size_bytes, ${body}
       FROM (VALUES (1)) AS one (x)
       LEFT JOIN session_incarnations s ON ${SESSION_MATCH('s')}
       LEFT JOIN sealed_records b ON ${RECORD_KEY_MATCH('b')} AND (b.event_id = $8 OR b.state = 'PENDING')
       WHERE NOT EXISTS (SELECT 1 FROM bind)`;
const RESOLVE_TEXT_SQL = RESOLVE_SQL(`convert_from(b.body, 'UTF8')`);
const RESOLVE_BYTES_SQL = RESOLVE_SQL('b.body');

/**
 * Every statement goes through the store's query API, which prepares it once per pooled connection (the service's
 * search_path is fixed per connection), so the hot ones (create, commit, resolve) are parsed and planned once.
 */
export class SealedRecordsRepository {
  constructor(private readonly db: Database) {}

  /**
   * One statement: raise the session floor to this incarnation (row-locking the floor, which serializes against
   * purge/revoke), then insert unless the incarnation is stale or the operation instance exists. True iff inserted;
   * otherwise `findCreateConflict` tells which.
   */
  async insertRecord(r: NewRecord): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `WITH floor AS (${RAISE_FLOOR_FOR_CREATE})
       INSERT INTO sealed_records (record_id, operation_instance_id, tenant, app_name, user_id, session_id, incarnation,
                                   function_call_id, state, schema_version, digest, chunk_bytes, chunk_digests, size_bytes, body, expires_at)
       SELECT $6, $7, $1, $2, $3, $4, $5, $8, 'PENDING', $9, $10, $11, $12, $13, $14, now() + make_interval(secs => $15::double precision / 1000)
       WHERE NOT EXISTS (SELECT 1 FROM floor WHERE floor.min_live > $5)
       ON CONFLICT (operation_instance_id) DO NOTHING`,
      [
        ...sessionParams(r.session),
        r.incarnation,
        r.recordId,
        r.operationInstanceId,
        r.functionCallId,
        r.schemaVersion,
        r.digest,
        r.chunkBytes,
        r.chunkDigests,
        r.body.length,
        r.body,
        r.pendingTtlMs,
      ],
    );
    return rowCount === 1;
  }

  /**
   * The second statement of a create that inserted nothing: the session floor (the floor never goes down, so a
   * floor above the incarnation now means it was stale then, or has been purged since) and the row that won the
   * operation instance (a read-back inside the inserting statement cannot see a concurrently committed winner).
   */
  async findCreateConflict(session: SessionKey, operationInstanceId: string): Promise<{ minLive: number | null; existing: ExistingRecord | null }> {
    const { rows } = await this.db.query(
      `SELECT s.min_live, r.record_id, r.tenant, r.app_name, r.user_id, r.session_id, r.incarnation, r.function_call_id, r.schema_version, r.state, r.digest
       FROM (VALUES (1)) AS one (x)
       LEFT JOIN session_incarnations s ON ${SESSION_MATCH('s')}
       LEFT JOIN sealed_records r ON r.operation_instance_id = $5`,
      [...sessionParams(session), operationInstanceId],
    );
    const row = rows[0];
    return {
      minLive: toNumber(row.min_live),
      existing:
        row.record_id === null
          ? null
          : {
              recordId: row.record_id,
              session: { tenant: row.tenant, appName: row.app_name, userId: row.user_id, sessionId: row.session_id },
              incarnation: Number(row.incarnation),
              functionCallId: row.function_call_id,
              schemaVersion: row.schema_version,
              state: row.state,
              digest: row.digest,
            },
    };
  }

  /**
   * PENDING → COMMITTED (or the same event again), in one guarded UPDATE on the record row itself: GC's delete
   * and this update contend for the same row lock and each re-checks `state` after waiting, so exactly one wins.
   */
  async commit(k: RecordKeyParams): Promise<{ schemaVersion: number } | null> {
    const { rows } = await this.db.query<{ schema_version: number }>(
      `UPDATE sealed_records r SET state = 'COMMITTED', event_id = $8, committed_at = COALESCE(r.committed_at, now())
       WHERE ${RECORD_KEY_MATCH('r')}
         AND (r.state = 'PENDING' OR r.event_id = $8)
         AND NOT EXISTS (SELECT 1 FROM session_incarnations s WHERE ${SESSION_MATCH('s')} AND s.min_live > $5)
       RETURNING r.schema_version`,
      [...sessionParams(k.session), k.incarnation, k.recordId, k.functionCallId, k.eventId],
    );
    return rows[0] ? { schemaVersion: rows[0].schema_version } : null;
  }

  /** Why a commit matched nothing: the session floor, and the record's state under the key without its event id. */
  async diagnoseCommit(k: RecordKeyParams): Promise<{ minLive: number | null; state: string | null; eventId: string | null }> {
    const { rows } = await this.db.query(
      `SELECT s.min_live, r.state, r.event_id
       FROM (VALUES (1)) AS one (x)
       LEFT JOIN session_incarnations s ON ${SESSION_MATCH('s')}
       LEFT JOIN sealed_records r ON ${RECORD_KEY_MATCH('r')}`,
      [...sessionParams(k.session), k.incarnation, k.recordId, k.functionCallId],
    );
    const row = rows[0];
    return { minLive: toNumber(row.min_live), state: row.state ?? null, eventId: row.event_id ?? null };
  }

  /**
   * Resolve in one round trip. The usual case — a PENDING record named with its event — is the bind alone: the same
   * guarded UPDATE as `commit` returns the bytes it bound (`bound`), and the second branch is not executed. Only when
   * the bind matched nothing (already committed, fenced, absent, or lost to a collector or to a bind to another
   * event) does the second branch read the session floor and the record under the full key, as the statement's
   * snapshot saw them.
   *
   * The canonical bytes are UTF-8 JSON, so they travel as text (`convert_from`, which checks the encoding): half
   * the bytes of bytea's hex form, and no hex encoding or decoding on either side. Bytes that are not valid UTF-8
   * (only corruption produces them) fail that statement as a whole, bind included; the same statement is then run
   * with the raw bytea, so a corrupted record takes exactly the path it always did (bind, then DATA_LOSS on the
   * digest check).
   */
  async findForResolve(k: RecordKeyParams): Promise<ResolvedRow> {
    const values = [...sessionParams(k.session), k.incarnation, k.recordId, k.functionCallId, k.eventId];
    let rows: ResolveSqlRow[];
    try {
      ({ rows } = await this.db.query<ResolveSqlRow>(RESOLVE_TEXT_SQL, values));
    } catch (error) {
      if ((error as { code?: string }).code !== INVALID_UTF8) throw error;
      ({ rows } = await this.db.query<ResolveSqlRow>(RESOLVE_BYTES_SQL, values));
    }
    const row = rows[0];
    const text = typeof row.body === 'string' ? row.body : undefined;
    return {
      minLive: toNumber(row.min_live),
      record:
        row.state === null || row.body === null
          ? null
          : {
              state: row.state,
              bound: row.bound === true,
              schemaVersion: row.schema_version,
              digest: row.digest,
              chunkBytes: row.chunk_bytes,
              chunkDigests: row.chunk_digests,
              sizeBytes: row.size_bytes,
              body: text === undefined ? (row.body as Buffer) : Buffer.from(text, 'utf8'),
              text,
            },
    };
  }

  /** One chunk of a COMMITTED record and its chunk digest, sliced in SQL (TOAST fetches only what it needs). */
  async readChunk(k: RecordKeyParams, index: number): Promise<ChunkRow> {
    const { rows } = await this.db.query(
      `SELECT s.min_live, r.size_bytes, r.chunk_bytes,
              CASE WHEN $9::int * r.chunk_bytes < r.size_bytes
                   THEN substring(r.body FROM $9::int * r.chunk_bytes + 1 FOR r.chunk_bytes) END AS part,
              CASE WHEN $9::int * r.chunk_bytes < r.size_bytes
                   THEN substring(r.chunk_digests FROM $9::int * 32 + 1 FOR 32) END AS chunk_digest
       FROM (VALUES (1)) AS one (x)
       LEFT JOIN session_incarnations s ON ${SESSION_MATCH('s')}
       LEFT JOIN sealed_records r ON ${RECORD_KEY_MATCH('r')}
         AND r.state = 'COMMITTED' AND r.event_id = $8`,
      [...sessionParams(k.session), k.incarnation, k.recordId, k.functionCallId, k.eventId, index],
    );
    const row = rows[0];
    return {
      minLive: toNumber(row.min_live),
      record: row.size_bytes === null ? null : { sizeBytes: row.size_bytes, chunkBytes: row.chunk_bytes, part: row.part, chunkDigest: row.chunk_digest },
    };
  }

  /** Fences `incarnation` and below (revoke). Returns the floor now in force. */
  async fence(session: SessionKey, incarnation: number): Promise<number> {
    const { rows } = await this.db.query<{ min_live: string }>(RAISE_FLOOR, [...sessionParams(session), incarnation + 1]);
    return Number(rows[0].min_live);
  }

  /**
   * Purge: fence first (its row lock waits for in-flight creates of the session to commit, and any later create
   * sees the raised floor), then delete in a second statement whose fresh snapshot sees those creates' rows.
   */
  async purge(session: SessionKey, incarnation: number): Promise<{ records: number; uploads: number }> {
    await this.fence(session, incarnation);
    const { rows } = await this.db.query<{ records: string; uploads: string }>(
      `WITH recs AS (DELETE FROM sealed_records r WHERE ${SESSION_MATCH('r')} AND r.incarnation <= $5 RETURNING 1),
            ups AS (DELETE FROM sealed_uploads u WHERE ${SESSION_MATCH('u')} AND u.incarnation <= $5 RETURNING 1)
       SELECT (SELECT count(*) FROM recs) AS records, (SELECT count(*) FROM ups) AS uploads`,
      [...sessionParams(session), incarnation],
    );
    return { records: Number(rows[0].records), uploads: Number(rows[0].uploads) };
  }

  /** Opens a staged upload unless the incarnation is already fenced; null when stale. */
  async beginUpload(u: UploadRow, uploadTtlMs: number): Promise<{ expiresAt: Date } | null> {
    const { rows } = await this.db.query<{ expires_at: Date }>(
      `INSERT INTO sealed_uploads (upload_id, operation_instance_id, tenant, app_name, user_id, session_id, incarnation, function_call_id,
                                   total_bytes, chunk_bytes, chunk_count, pending_ttl_ms, expires_at)
       SELECT $6, $7, $1, $2, $3, $4, $5, $8, $9, $10, $11, $12, now() + make_interval(secs => $13::double precision / 1000)
       WHERE NOT EXISTS (SELECT 1 FROM session_incarnations s WHERE ${SESSION_MATCH('s')} AND s.min_live > $5)
       RETURNING expires_at`,
      [
        ...sessionParams(u.session),
        u.incarnation,
        u.uploadId,
        u.operationInstanceId,
        u.functionCallId,
        u.totalBytes,
        u.chunkBytes,
        u.chunkCount,
        u.pendingTtlMs,
        uploadTtlMs,
      ],
    );
    return rows[0] ? { expiresAt: rows[0].expires_at } : null;
  }

  /** Stages one chunk if the upload is live and the index and size fit it; idempotent (DO NOTHING on a repeat). */
  async putChunk(uploadId: string, index: number, data: Buffer): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `INSERT INTO sealed_upload_chunks (upload_id, chunk_index, data)
       SELECT u.upload_id, $2, $3 FROM sealed_uploads u
       WHERE u.upload_id = $1 AND u.expires_at > now() AND $2 < u.chunk_count
         AND octet_length($3::bytea) = LEAST(u.chunk_bytes, u.total_bytes - $2 * u.chunk_bytes)
       ON CONFLICT (upload_id, chunk_index) DO NOTHING`,
      [uploadId, index, data],
    );
    return rowCount === 1;
  }

  /** Why a chunk was not staged: missing/expired upload, index or size out of bounds, or already staged (same bytes?). */
  async diagnoseChunk(
    uploadId: string,
    index: number,
    data: Buffer,
  ): Promise<null | { live: boolean; chunkCount: number; expectedBytes: number; staged: boolean; same: boolean }> {
    const { rows } = await this.db.query(
      `SELECT u.expires_at > now() AS live, u.chunk_count, GREATEST(0, LEAST(u.chunk_bytes, u.total_bytes - $2 * u.chunk_bytes)) AS expected,
              c.chunk_index IS NOT NULL AS staged, c.data = $3::bytea AS same
       FROM sealed_uploads u LEFT JOIN sealed_upload_chunks c ON c.upload_id = u.upload_id AND c.chunk_index = $2
       WHERE u.upload_id = $1`,
      [uploadId, index, data],
    );
    const row = rows[0];
    if (!row) return null;
    return { live: row.live, chunkCount: row.chunk_count, expectedBytes: Number(row.expected), staged: row.staged, same: row.same === true };
  }

  /** A live upload and its staged chunks in index order. */
  async loadUpload(uploadId: string): Promise<null | { upload: UploadRow; chunks: { index: number; data: Buffer }[] }> {
    const head = await this.db.query(`SELECT * FROM sealed_uploads WHERE upload_id = $1 AND expires_at > now()`, [uploadId]);
    const row = head.rows[0];
    if (!row) return null;
    const parts = await this.db.query<{ chunk_index: number; data: Buffer }>(
      `SELECT chunk_index, data FROM sealed_upload_chunks WHERE upload_id = $1 ORDER BY chunk_index`,
      [uploadId],
    );
    return {
      upload: {
        uploadId: row.upload_id,
        operationInstanceId: row.operation_instance_id,
        session: { tenant: row.tenant, appName: row.app_name, userId: row.user_id, sessionId: row.session_id },
        incarnation: Number(row.incarnation),
        functionCallId: row.function_call_id,
        totalBytes: row.total_bytes,
        chunkBytes: row.chunk_bytes,
        chunkCount: row.chunk_count,
        pendingTtlMs: row.pending_ttl_ms,
      },
      chunks: parts.rows.map((p) => ({ index: p.chunk_index, data: p.data })),
    };
  }

  async deleteUpload(uploadId: string): Promise<void> {
    await this.db.query(`DELETE FROM sealed_uploads WHERE upload_id = $1`, [uploadId]);
  }
}
