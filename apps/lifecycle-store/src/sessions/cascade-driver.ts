import { AppHostError, LifecycleReasons, cascadeParticipantContract, type CascadeOperation, type CascadeProgress, type SessionKey } from '@apphost/contracts';
import type { BusClient } from '@apphost/bus';
import type { FaultPoints, Logger } from '@apphost/runtime';
import type { LifecycleFaultPoint } from '../lifecycle.faults';
import type { LifecycleMetrics } from '../metrics';
import type { LifecycleRecord, LifecycleRepository } from './lifecycle.repository';

export interface CascadeDeps {
  repo: LifecycleRepository;
  bus: BusClient;
  faults: FaultPoints<LifecycleFaultPoint>;
  metrics: LifecycleMetrics;
  logger: Logger;
  timeoutMs: number;
}

/** The cascade plan recorded with the CAS to DELETING: fixed then, so a configuration change cannot orphan a step. */
export function cascadePlan(participants: readonly string[]): CascadeProgress {
  return { participants: participants.map((name) => ({ name, revoked: false, purged: false, attempts: 0 })), sessionPurged: false };
}

const MAX_CAS_RETRIES = 8;

/**
 * Drives DELETING(n) to DELETED(n) from whatever the record says is left: every participant's `revoke`, then the
 * session row and its events, then every participant's `purge`, then DELETED. Each step's completion is a guarded
 * update of the record (version CAS), so drivers racing on the same record (a retry, startup recovery, another
 * replica) converge; participants are idempotent, so a step repeated after a crash is harmless. A participant failure
 * is recorded on the record and counted, and surfaces as UNAVAILABLE (a retry resumes from the record).
 */
export async function driveCascade(deps: CascadeDeps, start: LifecycleRecord): Promise<LifecycleRecord> {
  const { repo, faults } = deps;
  let record = start;
  const key = record.key;
  let lostRaces = 0;
  const reread = async (): Promise<LifecycleRecord> => {
    if (++lostRaces > MAX_CAS_RETRIES)
      throw new AppHostError('CONFLICT', `deletion of ${key.sessionId} is contended; retry`, { details: LifecycleReasons.details('CONTENDED') });
    const latest = await repo.load(key);
    if (!latest || latest.incarnation !== start.incarnation) throw new AppHostError('CONFLICT', `session ${key.sessionId} moved on during deletion`);
    return latest;
  };

  while (record.state === 'DELETING') {
    const cascade = record.cascade!;
    const pendingRevoke = cascade.participants.find((p) => !p.revoked);
    if (pendingRevoke) {
      await faults.hit('delete.before-revoke');
      const next = await callParticipant(deps, record, pendingRevoke.name, 'revoke');
      if (!next) {
        record = await reread();
        continue;
      }
      record = next;
      await faults.hit('delete.after-revoke');
      continue;
    }
    if (!cascade.sessionPurged) {
      await faults.hit('delete.before-session-purge');
      const next = await repo.purgeSession(key, record.incarnation, record.version);
      deps.metrics.cascadeSteps.inc({ participant: 'lifecycle-store', step: 'session', outcome: next ? 'ok' : 'lost' });
      if (!next) {
        record = await reread();
        continue;
      }
      record = next;
      await faults.hit('delete.after-session-purge');
      continue;
    }
    const pendingPurge = cascade.participants.find((p) => !p.purged);
    if (pendingPurge) {
      await faults.hit('delete.before-purge');
      const next = await callParticipant(deps, record, pendingPurge.name, 'purge');
      if (!next) {
        record = await reread();
        continue;
      }
      record = next;
      await faults.hit('delete.after-purge');
      continue;
    }
    await faults.hit('delete.before-deleted');
    const deleted = await repo.finishDeletion(key, record.incarnation, record.version);
    if (!deleted) {
      record = await reread();
      continue;
    }
    deps.metrics.transitions.inc({ transition: 'delete', outcome: 'ok' });
    record = deleted;
    await faults.hit('delete.after-deleted');
  }
  return record;
}

/** One participant step; returns the record with the step recorded, or null if the record moved (re-read). */
async function callParticipant(deps: CascadeDeps, record: LifecycleRecord, participant: string, operation: CascadeOperation): Promise<LifecycleRecord | null> {
  const key: SessionKey = record.key;
  const flag = operation === 'revoke' ? 'revoked' : 'purged';
  try {
    await deps.bus.request(
      cascadeParticipantContract(participant, operation),
      { session: key, incarnation: record.incarnation },
      { timeoutMs: deps.timeoutMs },
    );
  } catch (error) {
    const envelope = error instanceof AppHostError ? error : new AppHostError('INTERNAL', 'participant call failed');
    deps.metrics.cascadeSteps.inc({ participant, step: operation, outcome: 'failed' });
    deps.logger.warn(
      { participant, operation, code: envelope.code, sessionId: key.sessionId, incarnation: record.incarnation },
      'deletion cascade step failed',
    );
    const failed = withParticipant(record.cascade!, participant, (p) => ({
      ...p,
      attempts: p.attempts + 1,
      lastError: `${operation}: ${envelope.code}: ${envelope.message}`.slice(0, 512),
    }));
    const saved = await deps.repo.recordProgress(key, record.incarnation, record.version, failed);
    throw new AppHostError(
      'UNAVAILABLE',
      `deletion of session ${key.sessionId} is incomplete: ${participant} ${operation} failed (${envelope.code}); retry to resume`,
      {
        details: {
          state: 'DELETING',
          incarnation: record.incarnation,
          participant,
          operation,
          pending: pendingSteps((saved ?? record).cascade!),
        },
      },
    );
  }
  deps.metrics.cascadeSteps.inc({ participant, step: operation, outcome: 'ok' });
  const done = withParticipant(record.cascade!, participant, (p) => {
    const { lastError: _lastError, ...rest } = p;
    return { ...rest, [flag]: true, attempts: p.attempts + 1 };
  });
  return deps.repo.recordProgress(key, record.incarnation, record.version, done);
}

function withParticipant(
  cascade: CascadeProgress,
  name: string,
  change: (p: CascadeProgress['participants'][number]) => CascadeProgress['participants'][number],
): CascadeProgress {
  return { ...cascade, participants: cascade.participants.map((p) => (p.name === name ? change(p) : p)) };
}

function pendingSteps(cascade: CascadeProgress): string[] {
  return [
    ...cascade.participants.filter((p) => !p.revoked).map((p) => `${p.name}.revoke`),
    ...(cascade.sessionPurged ? [] : ['lifecycle-store.session']),
    ...cascade.participants.filter((p) => !p.purged).map((p) => `${p.name}.purge`),
  ];
}
