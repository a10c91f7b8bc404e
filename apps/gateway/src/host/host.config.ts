import { z } from 'zod';
import { commaList, blankToUndefined } from '@apphost/runtime';
import { normalizeOrigin } from '../auth/origin';

/**
 * The reference web host's settings: where the sandbox proxy listens and the origin browsers reach it at. The
 * sandbox must be a different origin from the host page (ideally a different site: its own host name behind an
 * Ingress), so a View never runs with the page's origin, storage or credentials.
 */
export interface HostPageSettings {
  /** The sandbox listener's port; absent: the gateway's port + 1 (a random free port when the gateway's is 0). */
  sandboxPort: number | undefined;
  /** The sandbox's public origin; absent: `http://<bind host>:<sandbox port>` (development on loopback). */
  sandboxOrigin: string | undefined;
  /** App names the page offers in its chooser (the plane's demo apps in development); the user may type another. */
  apps: string[];
}

export const hostPageSettingsSchema = z
  .object({
    APPHOST_SANDBOX_PORT: z.preprocess(blankToUndefined, z.coerce.number({ error: 'must be a port number' }).int().min(0).max(65535).optional()),
    APPHOST_SANDBOX_ORIGIN: z.preprocess(
      blankToUndefined,
      z
        .string()
        .optional()
        .transform((raw, ctx) => {
          if (raw === undefined) return undefined;
          const origin = normalizeOrigin(raw);
          if (!origin) ctx.addIssue({ code: 'custom', message: `not an http(s) origin: ${JSON.stringify(raw)}` });
          return origin;
        }),
    ),
    APPHOST_HOST_APPS: z.preprocess(blankToUndefined, z.string().optional().transform(commaList)),
  })
  .transform((env): HostPageSettings => ({ sandboxPort: env.APPHOST_SANDBOX_PORT, sandboxOrigin: env.APPHOST_SANDBOX_ORIGIN, apps: env.APPHOST_HOST_APPS }));
