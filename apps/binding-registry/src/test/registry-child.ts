/**
 * A registry replica in its own process, for crash tests: boots on `NATS_URL` with `DATABASE_SCHEMA_PREFIX` and
 * `INSTANCE_ID` (lease `REGISTRY_INSTANCE_LEASE_MS`), prints `REGISTRY_READY <instanceId>` and runs until
 * killed. A SIGKILL is a crash: no graceful stop, no rows closed, its NATS connection and stdio children just die.
 * `REGISTRY_CHILD_HOLD_AT=<fault point>` holds the first request that reaches that point there for good (printing
 * `FAULT_HELD <point>`), so a test can kill the process in the middle of that step.
 */
import { FAULT_POINTS, type FaultPoints } from '@apphost/runtime';
import type { RegistryFaultPoint } from '../registry.faults';
import { bootRegistry } from './registry-harness';

async function main(): Promise<void> {
  const natsUrl = process.env['NATS_URL'];
  const prefix = process.env['DATABASE_SCHEMA_PREFIX'];
  const instanceId = process.env['INSTANCE_ID'];
  if (!natsUrl || !prefix || !instanceId) throw new Error('NATS_URL, DATABASE_SCHEMA_PREFIX and INSTANCE_ID are required');
  const registry = await bootRegistry(natsUrl, prefix, {
    INSTANCE_ID: instanceId,
    REGISTRY_INSTANCE_LEASE_MS: process.env['REGISTRY_INSTANCE_LEASE_MS'] ?? '3000',
    ...(process.env['SHUTDOWN_GRACE_MS'] ? { SHUTDOWN_GRACE_MS: process.env['SHUTDOWN_GRACE_MS'] } : {}),
    ...(process.env['REGISTRY_CONSTRUCTION_LEASE_MS'] ? { REGISTRY_CONSTRUCTION_LEASE_MS: process.env['REGISTRY_CONSTRUCTION_LEASE_MS'] } : {}),
    ...(process.env['DATABASE_URL'] ? { DATABASE_URL: process.env['DATABASE_URL'] } : {}),
    // The parent's bus namespace (spawnTs passes it), not one of this process's own.
    ...(process.env['BUS_SUBJECT_PREFIX'] ? { BUS_SUBJECT_PREFIX: process.env['BUS_SUBJECT_PREFIX'] } : {}),
  });
  const holdAt = process.env['REGISTRY_CHILD_HOLD_AT'] as RegistryFaultPoint | undefined;
  if (holdAt) {
    registry.running.app.get<FaultPoints<RegistryFaultPoint>>(FAULT_POINTS).arm(holdAt, () => {
      process.stdout.write(`FAULT_HELD ${holdAt}\n`);
      return new Promise<void>(() => undefined);
    });
  }
  process.stdout.write(`REGISTRY_READY ${registry.instanceId}\n`);
  const stop = () => void registry.stop().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`registry child failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
