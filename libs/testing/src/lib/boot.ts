import type { ServiceDefinition } from '@apphost/runtime';
import { bootService, type ServiceUnderTest } from './service-harness';

/** Anything a test starts and must stop again. */
export interface Stoppable {
  stop(): Promise<void>;
}

/** Started things, stopped together: `stop()` stops each (the last started first), then throws the first failure. */
export interface StartedInOrder<T extends Stoppable> {
  started: T[];
  stop(): Promise<void>;
}

async function stopAll(started: readonly Stoppable[]): Promise<unknown[]> {
  const failures: unknown[] = [];
  for (const s of [...started].reverse()) await s.stop().catch((error: unknown) => failures.push(error));
  return failures;
}

/**
 * Starts each step in order. When one fails, stops those already started (the last first) and rethrows that
 * failure, so a half-started set never leaks connections, ports or child processes.
 */
export async function startInOrder<T extends Stoppable>(steps: readonly (() => Promise<T>)[]): Promise<StartedInOrder<T>> {
  const started: T[] = [];
  try {
    for (const step of steps) started.push(await step());
  } catch (error) {
    await stopAll(started);
    throw error;
  }
  return {
    started,
    stop: async () => {
      const [first] = await stopAll(started.splice(0));
      if (first !== undefined) throw first;
    },
  };
}

/** One service of a set: its definition and its own environment (over the set's shared one). */
export interface ServiceBoot {
  definition: ServiceDefinition;
  env?: Record<string, string>;
}

export interface BootedServices<K extends string> {
  services: Record<K, ServiceUnderTest>;
  stop(): Promise<void>;
}

/**
 * Boots several services with `bootService` under one `prefix`, in the order of `plan`'s keys (stores first, the
 * gateway last), each with `env` and then its own; on a failure stops those already booted. `stop()` stops them
 * in reverse order.
 */
export async function bootServices<K extends string>(
  prefix: string,
  plan: Record<K, ServiceBoot>,
  env: Record<string, string> = {},
): Promise<BootedServices<K>> {
  const names = Object.keys(plan) as K[];
  const { started, stop } = await startInOrder(names.map((name) => () => bootService(plan[name].definition, prefix, { ...env, ...plan[name].env })));
  const services = Object.fromEntries(names.map((name, i) => [name, started[i]])) as Record<K, ServiceUnderTest>;
  return { services, stop };
}
