import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

/**
 * `BENCH_CPU_PROFILE=<dir>`: a bench wraps the runs it names in `profiled(label, run)`, and each is written to
 * `<dir>/<label>.cpuprofile` (the directory is created if missing; open it in Chrome's DevTools or summarize it by self time). In `plane` mode that is the
 * gateway, every service and the load generator on one event loop. Unset: `run` alone, with no inspector attached.
 */
export async function profiled<T>(label: string, run: () => Promise<T>): Promise<T> {
  const dir = process.env['BENCH_CPU_PROFILE'];
  if (!dir) return run();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await run();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    await mkdir(dir, { recursive: true });
    await writeFile(`${dir}/${label}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  }
}
