import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineContract } from '@apphost/contracts';

/** Shared by the requester (bus.bench.ts) and the responder (bus-responder.ts). */
export const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
export const QUEUE_GROUP = 'bench-echo';
export const TIMEOUT_MS = 10_000;

const echoSchema = z.object({
  sessionId: z.uuid(),
  op: z.enum(['create', 'update', 'delete']),
  pad: z.string().max(1024),
});

/** A random token so a run never shares subjects with tests or another run. */
export function newRunId(): string {
  return randomBytes(4).toString('hex');
}

export function rawSubject(runId: string): string {
  return `bench.raw-echo.${runId}`;
}

export function echoContract(runId: string) {
  return defineContract({ service: 'gateway', operation: `bench-echo-${runId}`, version: 1, request: echoSchema, response: echoSchema });
}

/** ~110 bytes of JSON, the size of a typical small bus request. */
export function samplePayload(): z.input<typeof echoSchema> {
  return { sessionId: randomUUID(), op: 'create', pad: 'x'.repeat(60) };
}
