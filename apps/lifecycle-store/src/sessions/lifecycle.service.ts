import type { BusClient } from '@apphost/bus';
import {
  AppHostError,
  type AppendProvenance,
  type LedgerEventInput,
  type LifecycleGetWidgetStanding,
  type PublicEvent,
  type ResponseOf,
  type SessionKey,
  type SessionSnapshot,
  type SessionSummary,
} from '@apphost/contracts';
import type { FaultPoints, Logger } from '@apphost/runtime';
import type { LifecycleConfig } from '../config';
import type { EventLedgerRepository, StoredEvent } from '../events/event-ledger.repository';
import { appendEvents, getEvent, listEvents, locateStored } from '../events/events.service';
import type { LifecycleFaultPoint } from '../lifecycle.faults';
import type { LifecycleMetrics } from '../metrics';
import { loadOrAdopt } from './adoption';
import { driveCascade } from './cascade-driver';
import { createSession, recoverCreation, type CreateRequest } from './create-session';
import { deleteSession } from './delete-session';
import type { LifecycleRecord, LifecycleRepository, RevocationKey } from './lifecycle.repository';
import { notFound, toSnapshot } from './replies';

export interface LifecycleServiceDeps {
  repo: LifecycleRepository;
  ledger: EventLedgerRepository;
  bus: BusClient;
  faults: FaultPoints<LifecycleFaultPoint>;
  metrics: LifecycleMetrics;
  logger: Logger;
  config: LifecycleConfig;
}

const RECOVERY_BATCH = 1000;

export type SessionWithEvent = Omit<ResponseOf<typeof LifecycleGetWidgetStanding>, 'revoked'>;

/** The lifecycle-store's operations, composed from the small modules beside it; the bus handlers call only this. */
export class LifecycleService {
  constructor(private readonly deps: LifecycleServiceDeps) {}

  create(req: CreateRequest): Promise<SessionSnapshot> {
    return createSession({ ...this.deps, leaseMs: this.deps.config.LIFECYCLE_CREATING_LEASE_MS }, req);
  }

  async get(session: SessionKey): Promise<SessionSnapshot> {
    const record = await loadOrAdopt(this.deps.repo, this.deps.metrics, session);
    if (!record) throw notFound(session);
    return toSnapshot(record);
  }

  delete(req: { session: SessionKey; expectedIncarnation?: number }): Promise<SessionSnapshot> {
    return deleteSession(this.cascadeDeps(), req);
  }

  append(req: { session: SessionKey; incarnation: number; provenance: AppendProvenance; events: LedgerEventInput[]; fencingToken?: number }) {
    return appendEvents(this.deps, req);
  }

  list(req: {
    session: SessionKey;
    incarnation?: number;
    afterId?: number;
    limit?: number;
    audience?: 'model' | 'all';
  }): Promise<{ incarnation: number; events: PublicEvent[]; nextAfterId: number | null }> {
    return listEvents(this.deps, req);
  }

  listSessions(req: { owner: Omit<SessionKey, 'sessionId'>; limit: number }): Promise<{ sessions: SessionSummary[] }> {
    return this.deps.repo.listByOwner(req.owner, req.limit).then((sessions) => ({ sessions }));
  }

  getEvent(req: { session: SessionKey; incarnation: number; eventId: number; functionCallId: string }) {
    return getEvent(this.deps, req);
  }

  /**
   * `get-session-standing` and `get-widget-standing`: when the principal was revoked (null: it is not), the session's
   * record and, with `event`, the call's event on an `ACTIVE(n)` record's ledger (null session: it does not exist;
   * null event: not asked, or not ACTIVE; `missing`: NOT_FOUND) — one statement (`LifecycleRepository.standing`). A
   * legacy session is adopted first, as `get` does, and its event read on the adopted incarnation.
   */
  async standing(req: {
    session: SessionKey;
    principal: RevocationKey;
    event?: { eventId: number; functionCallId: string };
  }): Promise<SessionWithEvent & { revokedAt: Date | null }> {
    const found = await this.deps.repo.standing(req.session, req.principal, req.event?.eventId ?? null);
    if (found.record || !found.legacy) return { revokedAt: found.revokedAt, ...withEvent(found.record, req.event, found.event) };
    const record = await loadOrAdopt(this.deps.repo, this.deps.metrics, req.session);
    const event = record?.state === 'ACTIVE' && req.event ? await this.deps.ledger.one(req.session, record.incarnation, req.event.eventId) : null;
    return { revokedAt: found.revokedAt, ...withEvent(record, req.event, event) };
  }

  /**
   * Startup recovery, driven by the records: a CREATING whose receipted commit landed is completed to ACTIVE (an
   * uncommitted one is left for its creator's retry or for reclaim after the lease); every DELETING cascade resumes.
   * Failures are logged and left for the next retry of DELETE or the next start.
   */
  async recover(): Promise<{ activated: number; deleted: number; pending: number }> {
    const result = { activated: 0, deleted: 0, pending: 0 };
    for (const key of await this.deps.repo.unfinished('CREATING', RECOVERY_BATCH)) {
      const done = await recoverCreation(this.deps, key).catch((err: unknown) => {
        this.deps.logger.warn({ err, sessionId: key.sessionId }, 'creation recovery failed');
        return null;
      });
      if (done) result.activated++;
    }
    for (const key of await this.deps.repo.unfinished('DELETING', RECOVERY_BATCH)) {
      try {
        const record = await this.deps.repo.load(key);
        if (record?.state !== 'DELETING') continue;
        const finished = await driveCascade(this.cascadeDeps(), record);
        if (finished.state === 'DELETED') result.deleted++;
      } catch (err) {
        result.pending++;
        this.deps.logger.warn({ err, sessionId: key.sessionId }, 'deletion cascade still incomplete after recovery');
      }
    }
    return result;
  }

  private cascadeDeps() {
    return { ...this.deps, participants: this.deps.config.LIFECYCLE_CASCADE_PARTICIPANTS, timeoutMs: this.deps.config.LIFECYCLE_CASCADE_TIMEOUT_MS };
  }
}

/** A standing's session and event as `get-widget-standing` answers them, from the record and the event read with it. */
function withEvent(record: LifecycleRecord | null, ask: { eventId: number; functionCallId: string } | undefined, stored: StoredEvent | null): SessionWithEvent {
  if (!record) return { session: null, event: null };
  const session = toSnapshot(record);
  if (!ask || record.state !== 'ACTIVE') return { session, event: null };
  try {
    return { session, event: { located: locateStored(stored, ask) } };
  } catch (error) {
    if (error instanceof AppHostError && error.code === 'NOT_FOUND') return { session, event: { missing: error.message } };
    throw error;
  }
}
