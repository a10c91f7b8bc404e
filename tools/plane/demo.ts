import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { BusClient, type BusTransport } from '@apphost/bus';
import { hostProfileSchema, RegistryPutProfile, RegistryPutToolset, toolsetSpecSchema } from '@apphost/contracts';

const EXAMPLES = path.join(__dirname, '..', '..', 'examples');

/** The demo `npm start` registers: the example profile, its toolsets, and the apps whose catalogs they make. */
const DEMO = {
  profiles: { demo: 'demo-profile.json' },
  toolsets: {
    vanilla: 'vanilla-toolset.json',
    careful: 'careful-toolset.json',
    monitor: 'monitor-toolset.json',
    pdf: 'pdf-toolset.json',
    budget: 'budget-toolset.json',
  },
  apps: { demo: ['vanilla', 'careful'], monitor: ['monitor'], pdf: ['pdf'], budget: ['budget'] },
} as const;

export interface DemoPlan {
  profiles: { profileId: string; profile: z.infer<typeof hostProfileSchema> }[];
  toolsets: { toolsetId: string; spec: z.infer<typeof toolsetSpecSchema> }[];
  apps: Record<string, string[]>;
}

/** The example files, validated with the registry's own schemas (a broken example fails `npm start`, naming the file). */
export function loadDemo(dir: string = EXAMPLES): DemoPlan {
  const read = <S extends z.ZodType>(file: string, schema: S): z.infer<S> => {
    const parsed = schema.safeParse(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));
    if (!parsed.success) throw new Error(`examples/${file}: ${parsed.error.message}`);
    return parsed.data;
  };
  return {
    profiles: Object.entries(DEMO.profiles).map(([profileId, file]) => ({ profileId, profile: read(file, hostProfileSchema) })),
    toolsets: Object.entries(DEMO.toolsets).map(([toolsetId, file]) => ({ toolsetId, spec: read(file, toolsetSpecSchema) })),
    apps: Object.fromEntries(Object.entries(DEMO.apps).map(([app, ids]) => [app, [...ids]])),
  };
}

/**
 * The environment the demo adds: exactly its stdio specs allowed (REGISTRY_STDIO_ALLOWLIST), its apps' catalogs
 * (CATALOG_APP_TOOLSETS) and the host page's app chooser (APPHOST_HOST_APPS). What the user set comes first: their
 * allowlist entries are kept, their app definitions win over the demo's.
 */
export function demoEnv(plan: DemoPlan, env: Record<string, string | undefined>): Record<string, string> {
  const stdio = plan.toolsets.flatMap(({ spec }) =>
    spec.connection.kind === 'stdio'
      ? [
          {
            command: spec.connection.command,
            args: spec.connection.args,
            env: spec.connection.env,
            ...(spec.connection.cwd ? { cwd: spec.connection.cwd } : {}),
          },
        ]
      : [],
  );
  const userAllowlist = jsonOr<unknown[]>(env.REGISTRY_STDIO_ALLOWLIST, 'REGISTRY_STDIO_ALLOWLIST', []);
  const userApps = jsonOr<Record<string, unknown>>(env.CATALOG_APP_TOOLSETS, 'CATALOG_APP_TOOLSETS', {});
  const demoApps = Object.fromEntries(Object.entries(plan.apps).map(([app, ids]) => [app, ids.map((toolsetId) => ({ toolsetId }))]));
  const apps = { ...demoApps, ...userApps };
  return {
    REGISTRY_STDIO_ALLOWLIST: JSON.stringify([...userAllowlist, ...stdio]),
    CATALOG_APP_TOOLSETS: JSON.stringify(apps),
    APPHOST_HOST_APPS: env.APPHOST_HOST_APPS ?? Object.keys(apps).join(','),
  };
}

/** PUTs the demo's profiles and toolsets (idempotent: an unchanged example is not a change). */
export async function registerDemo(plan: DemoPlan, transport: BusTransport): Promise<void> {
  const bus = new BusClient({ transport, defaultTimeoutMs: 20_000 });
  for (const { profileId, profile } of plan.profiles) await bus.request(RegistryPutProfile, { profileId, profile });
  for (const { toolsetId, spec } of plan.toolsets) await bus.request(RegistryPutToolset, { toolsetId, spec });
}

function jsonOr<T>(raw: string | undefined, name: string, fallback: T): T {
  if (raw === undefined || raw.trim() === '') return fallback;
  try {
    return JSON.parse(raw) as T;
  } catch {
    throw new Error(`${name}: not JSON`);
  }
}
