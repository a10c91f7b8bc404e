import { canonicalDigest } from '@apphost/canonical-json';
import type { LedgerEventInput, SessionKey, SessionSnapshot } from '@apphost/contracts';
import type { FaultPoints } from '@apphost/runtime';
import { crossValidate, finalizeEvents, type FinalizedEvent } from '../events/finalizer';
import type { LifecycleFaultPoint } from '../lifecycle.faults';
import type { LifecycleMetrics } from '../metrics';
import { loadOrAdopt } from './adoption';
import type { LifecycleRecord, LifecycleRepository } from './lifecycle.repository';
import { conflict, failedPrecondition, toSnapshot } from './replies';

export interface CreateRequest {
  session: SessionKey;
  creationOperationId: string;
  expectedPrior?: { state: 'ABSENT' } | { state: 'DELETED'; incarnation: number };
  importedEvents?: LedgerEventInput[];
  reclaim?: boolean;
}

export interface CreateDeps {
  repo: LifecycleRepository;
  faults: FaultPoints<LifecycleFaultPoint>;
  metrics: LifecycleMetrics;
  leaseMs: number;
}

const MAX_ATTEMPTS = 5;

/**
 * The digest of the finalized imported events that the creation receipt carries (canonical JSON, purpose
 * `replay-identity`, under a lifecycle-specific envelope). Recovery recomputes it from the committed rows.
 */
export function importDigest(events: Record<string, unknown>[]): string {
  return canonicalDigest('replay-identity', { kind: 'apphost.lifecycle-store.import.v1', events });
}

/**
 * The fenced create: reserve CREATING(n) by CAS (from ABSENT — tried first, without a read — from DELETED(n-1), or by
 * reclaiming an abandoned CREATING), finalize the imported events, commit the session row + receipt + events only if
 * the fence still names n, then CAS to ACTIVE(n) comparing the receipt. A retry with the same creation-operation id
 * resumes wherever it stopped.
 */
export async function createSession(deps: CreateDeps, req: CreateRequest): Promise<SessionSnapshot> {
  const { repo, faults, metrics } = deps;
  const imported = req.importedEvents ?? [];
  crossValidate(imported); // malformed imports fail before any effect
  if (req.expectedPrior?.state !== 'DELETED') {
    // The common case is a brand-new session: reserve from ABSENT straight away instead of reading first. The insert is
    // guarded (no record, no session row of any kind, so never a legacy row to adopt), so a miss has written nothing
    // and falls through to the read-then-CAS loop below, which answers from what is there (a retry of this same
    // creation, a conflict, adoption, re-creation after DELETED). Saves the probe's round trip on every fresh create.
    await faults.hit('create.before-reservation');
    const reserved = await repo.reserveFromAbsent(req.session, req.creationOperationId);
    if (reserved) {
      metrics.transitions.inc({ transition: 'reserve', outcome: 'ok' });
      await faults.hit('create.after-reservation');
      return completeCreation(deps, reserved, req);
    }
  }
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const record = await loadOrAdopt(repo, metrics, req.session);
    if (record && record.creationOperationId === req.creationOperationId) {
      if (record.state === 'ACTIVE') return toSnapshot(record);
      if (record.state === 'CREATING') return completeCreation(deps, record, req);
      throw conflict('CREATION_SUPERSEDED', `creation ${req.creationOperationId} made incarnation ${record.incarnation}, which is now ${record.state}`, {
        state: record.state,
        incarnation: record.incarnation,
      });
    }
    checkExpectedPrior(req, record);
    await faults.hit('create.before-reservation');
    let reserved: LifecycleRecord | null;
    if (!record) {
      reserved = await repo.reserveFromAbsent(req.session, req.creationOperationId);
    } else if (record.state === 'DELETED') {
      reserved = await repo.reserveAfterDeleted(req.session, req.creationOperationId, record.incarnation, record.version);
    } else if (record.state === 'CREATING') {
      reserved = await reclaimOrRefuse(deps, record, req);
    } else if (record.state === 'ACTIVE') {
      throw conflict('ALREADY_EXISTS', `session ${req.session.sessionId} already exists`, { incarnation: record.incarnation });
    } else {
      throw conflict('DELETION_IN_PROGRESS', `session ${req.session.sessionId} is being deleted; create it again once deletion completes`, {
        incarnation: record.incarnation,
      });
    }
    metrics.transitions.inc({ transition: 'reserve', outcome: reserved ? 'ok' : 'lost' });
    if (!reserved) continue; // lost the CAS: re-read and answer from what won
    await faults.hit('create.after-reservation');
    return completeCreation(deps, reserved, req);
  }
  throw conflict('CONTENDED', `session ${req.session.sessionId} changed on every attempt; retry`);
}

function checkExpectedPrior(req: CreateRequest, record: LifecycleRecord | null): void {
  const prior = req.expectedPrior;
  if (!prior) return;
  const matches = prior.state === 'ABSENT' ? record === null : record?.state === 'DELETED' && record.incarnation === prior.incarnation;
  if (!matches) {
    throw conflict('UNEXPECTED_PRIOR_STATE', `session ${req.session.sessionId} is not in the expected prior state`, {
      expected: prior,
      actual: record ? { state: record.state, incarnation: record.incarnation } : { state: 'ABSENT' },
    });
  }
}

async function reclaimOrRefuse(deps: CreateDeps, record: LifecycleRecord, req: CreateRequest): Promise<LifecycleRecord | null> {
  const expired = record.reservedAgeMs !== null && record.reservedAgeMs >= deps.leaseMs;
  if (!req.reclaim && !expired) {
    // Transient: the other creation completes, or its lease lapses and a retry reclaims it.
    const retryAfterMs = Math.max(0, deps.leaseMs - (record.reservedAgeMs ?? 0));
    throw conflict(
      'CREATE_IN_PROGRESS',
      `session ${req.session.sessionId} is being created by another operation; retry`,
      { incarnation: record.incarnation, retryAfterMs },
      { retryable: true },
    );
  }
  const outcome = await deps.repo.reclaim(req.session, req.creationOperationId, record, req.reclaim ? null : deps.leaseMs);
  deps.metrics.transitions.inc({ transition: 'reclaim', outcome: outcome.kind });
  if (outcome.kind === 'reserved') return outcome.record;
  if (outcome.kind === 'row-exists') {
    // The creator committed before the fence moved: its creation stands. Complete it, and refuse this one.
    await recoverCreation(deps, record.key);
    throw conflict('ALREADY_EXISTS', `session ${req.session.sessionId} was created by another operation`);
  }
  return null;
}

async function completeCreation(deps: CreateDeps, reservation: LifecycleRecord, req: CreateRequest): Promise<SessionSnapshot> {
  const { repo, faults, metrics } = deps;
  const key = req.session;
  await faults.hit('create.before-import-finalization');
  const finalized: FinalizedEvent[] = finalizeEvents(req.importedEvents ?? [], { path: 'session-api' });
  const receipt = { incarnation: reservation.incarnation, operationId: req.creationOperationId, digest: importDigest(finalized) };
  await faults.hit('create.after-import-finalization');
  await faults.hit('create.before-session-commit');
  const outcome = await repo.createIfFenceCurrent(
    key,
    receipt,
    finalized.map((body) => ({ body })),
    () => faults.hit('create.inside-session-commit'),
  );
  metrics.transitions.inc({ transition: 'commit', outcome });
  if (outcome === 'fence-retired') {
    throw failedPrecondition('FENCE_RETIRED', `creation ${req.creationOperationId} was reclaimed; its session commit was refused`, {
      incarnation: reservation.incarnation,
    });
  }
  if (outcome === 'row-exists') {
    const row = await repo.loadSessionRow(key);
    if (!row || row.incarnation !== receipt.incarnation || row.creationOperationId !== receipt.operationId) {
      throw conflict('ALREADY_EXISTS', `session ${key.sessionId} was created by another operation`);
    }
    if (row.importDigest !== receipt.digest) {
      throw conflict('CREATION_OPERATION_REUSED', `creation ${req.creationOperationId} was already committed with different imported events`);
    }
  }
  await faults.hit('create.after-session-commit');
  const active = await activate(deps, reservation, receipt);
  await faults.hit('create.after-activation');
  return toSnapshot(active);
}

async function activate(
  deps: CreateDeps,
  reservation: LifecycleRecord,
  receipt: { incarnation: number; operationId: string; digest: string },
): Promise<LifecycleRecord> {
  const key = reservation.key;
  let current: LifecycleRecord | null = reservation;
  for (let attempt = 0; attempt < MAX_ATTEMPTS && current; attempt++) {
    if (current.state === 'CREATING' && current.incarnation === receipt.incarnation && current.creationOperationId === receipt.operationId) {
      const active = await deps.repo.activate(key, receipt, current.version);
      deps.metrics.transitions.inc({ transition: 'activate', outcome: active ? 'ok' : 'lost' });
      if (active) return active;
    } else if (current.incarnation === receipt.incarnation && current.creationOperationId === receipt.operationId && current.state !== 'CREATING') {
      return current; // activated by a concurrent retry or by recovery (and possibly already moving on)
    } else {
      break;
    }
    current = await deps.repo.load(key);
  }
  throw failedPrecondition('RECEIPT_MISMATCH', `session ${key.sessionId} could not be activated under creation ${receipt.operationId}`);
}

/**
 * Recovery of a CREATING(n) whose creator committed and then died before ACTIVE: the committed row must carry the
 * reservation's operation id and incarnation, and the digest recomputed from the committed imported events must equal
 * the receipt's (a count is not enough). Returns the activated record, or null when there is nothing to complete.
 */
export async function recoverCreation(deps: Pick<CreateDeps, 'repo' | 'metrics'>, key: SessionKey): Promise<LifecycleRecord | null> {
  const record = await deps.repo.load(key);
  if (!record || record.state !== 'CREATING' || !record.creationOperationId) return null;
  const row = await deps.repo.loadSessionRow(key);
  if (!row || row.incarnation !== record.incarnation || row.creationOperationId !== record.creationOperationId || !row.importDigest) return null;
  const bodies = await deps.repo.importedEvents(key, record.incarnation);
  if (bodies.length !== row.importCount || importDigest(bodies) !== row.importDigest) {
    deps.metrics.transitions.inc({ transition: 'recover', outcome: 'receipt-mismatch' });
    return null;
  }
  const active = await deps.repo.activate(
    key,
    { incarnation: record.incarnation, operationId: record.creationOperationId, digest: row.importDigest },
    record.version,
  );
  deps.metrics.transitions.inc({ transition: 'recover', outcome: active ? 'ok' : 'lost' });
  return active;
}
