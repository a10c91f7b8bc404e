import { AppHostError, LifecycleReasons, type LifecycleReason, type SessionKey, type SessionSnapshot } from '@apphost/contracts';
import type { LifecycleRecord } from './lifecycle.repository';

/** The committed record as every lifecycle operation answers it. */
export function toSnapshot(record: LifecycleRecord): SessionSnapshot {
  return {
    session: record.key,
    incarnation: record.incarnation,
    state: record.state,
    version: record.version,
    adopted: record.adopted,
    updatedAt: record.updatedAt,
    cascade: record.cascade,
  };
}

export const notFound = (key: SessionKey) => new AppHostError('NOT_FOUND', `session ${key.sessionId} of app ${key.appName} does not exist`);

export function conflict(reason: LifecycleReason, message: string, details: Record<string, unknown> = {}, options: { retryable?: boolean } = {}): AppHostError {
  return new AppHostError('CONFLICT', message, { ...options, details: LifecycleReasons.details(reason, details) });
}

export function failedPrecondition(reason: LifecycleReason, message: string, details: Record<string, unknown> = {}): AppHostError {
  return new AppHostError('FAILED_PRECONDITION', message, { details: LifecycleReasons.details(reason, details) });
}
