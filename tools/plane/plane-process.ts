import fs from 'node:fs';
import { eventually, freePort, spawnTs } from '@apphost/testing';

/** The plane as a user meets it: `npm start` (tools/plane/main.ts) in its own process, nothing mocked. */
export const ENTRY = 'tools/plane/main.ts';

export interface ServiceEntry {
  service: string;
  status: string;
  describe?: { transport: string; instanceId: string; stores: { kind: string; namespace?: string; ready: boolean }[] };
}

export async function startPlane(env: Record<string, string>) {
  const port = await freePort();
  const child = spawnTs(ENTRY, { APPHOST_PORT: String(port), LOG_LEVEL: 'warn', ...env });
  const base = `http://127.0.0.1:${port}`;
  await eventually(async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined), 60_000, 200).catch((error: Error) => {
    child.kill('SIGKILL');
    throw new Error(`${error.message}\n${child.output().stdout}\n${child.output().stderr}`);
  });
  return { child, base };
}

export async function listServices(base: string, tokenFile: string): Promise<ServiceEntry[]> {
  const token = fs.readFileSync(tokenFile, 'utf8').trim();
  const res = await fetch(`${base}/v1/services`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { services: ServiceEntry[] }).services;
}
