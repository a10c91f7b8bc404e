import { execFileSync } from 'node:child_process';
import { ConnPing, type GenerationHandle } from '@apphost/contracts';
import { requestOnGeneration } from '@apphost/mcp';
import type { RegistryUnderTest } from './registry-harness';

/** The pid of a generation's stdio server, as its owner reports it. */
export async function serverPid(via: RegistryUnderTest, handle: GenerationHandle): Promise<number> {
  const { pid } = await requestOnGeneration(via.client, ConnPing, handle, {});
  if (pid === null) throw new Error('not a stdio generation');
  return pid;
}

/** True while a process with this pid exists (registries in this Jest process reap their children). */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The child processes of this Jest process: every stdio server the registries under test spawned. */
export function childProcessCount(): number {
  const out = execFileSync('ps', ['--ppid', String(process.pid), '-o', 'pid=', '-o', 'comm='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.endsWith(' ps')).length;
}

/** One sample of a metric from the registry's `/metrics` (labels matched as a substring), or undefined. */
export async function metricSample(via: RegistryUnderTest, name: string, labels = ''): Promise<number | undefined> {
  const text = await (await fetch(`${via.running.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
