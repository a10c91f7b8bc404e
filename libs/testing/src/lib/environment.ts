import { randomBytes } from 'node:crypto';
import path from 'node:path';

/** The real services the suite runs against (started by .ci/run when down). */
export const TEST_NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const TEST_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');

/** A schema/key prefix unique to one test, so suites sharing the real servers never see each other's data. */
export function uniquePrefix(): string {
  return `t_${randomBytes(5).toString('hex')}_`;
}

/**
 * This test file's bus namespace: Jest loads modules once per test file, so every file gets its own, and no
 * other suite on the shared NATS can answer its requests. Spawned planes and services get it as BUS_SUBJECT_PREFIX.
 */
export const TEST_BUS_PREFIX = `t${randomBytes(5).toString('hex')}`;
