import { eventually, spawnTs, TEST_DATABASE_URL, waitForExit } from '@apphost/testing';

export type RegistryProcess = ReturnType<typeof spawnTs>;

/** A registry replica as its own process (`registry-child.ts`) on `natsUrl`, sharing the suite's schemas and bus namespace. */
export async function startRegistryProcess(natsUrl: string, prefix: string, instanceId: string, env: Record<string, string> = {}): Promise<RegistryProcess> {
  const child = spawnTs('apps/binding-registry/src/test/registry-child.ts', {
    NATS_URL: natsUrl,
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA_PREFIX: prefix,
    INSTANCE_ID: instanceId,
    ...env,
  });
  await printed(child, `REGISTRY_READY ${instanceId}`, 60_000);
  return child;
}

/** Resolves once `child` printed `text` on stdout; rejects if it exits first or `timeoutMs` passes. */
export function printed(child: RegistryProcess, text: string, timeoutMs = 10_000): Promise<true> {
  return eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`registry process exited: ${child.output().stderr}`);
      return child.output().stdout.includes(text) ? true : undefined;
    },
    timeoutMs,
    25,
  );
}

/** Ends `child` with `signal` and waits for it to exit. */
export async function stopRegistryProcess(child: RegistryProcess | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  await waitForExit(child, 15_000).catch(() => undefined);
}
