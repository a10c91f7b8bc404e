import { z } from 'zod';
import { commaList, blankToUndefined } from '@apphost/runtime';
import { cascadeParticipantNameSchema } from '@apphost/contracts';

/** lifecycle-store settings, parsed once at startup (bad values stop the process, naming the variable). */
export const lifecycleConfigSchema = z.object({
  /** Comma-separated participant service names of the deletion cascade, called in this order. */
  LIFECYCLE_CASCADE_PARTICIPANTS: z.preprocess(blankToUndefined, z.string().optional().transform(commaList).pipe(z.array(cascadeParticipantNameSchema))),
  /** Per-call timeout of a cascade participant request. */
  LIFECYCLE_CASCADE_TIMEOUT_MS: z.preprocess(blankToUndefined, z.coerce.number().int().min(1).max(600_000).default(5000)),
  /** How long a CREATING reservation is protected; an older one may be reclaimed by another creator. */
  LIFECYCLE_CREATING_LEASE_MS: z.preprocess(blankToUndefined, z.coerce.number().int().min(0).max(86_400_000).default(30_000)),
  /** How long an accepted `ui/message` waits to be consumed before it reads `EXPIRED` (default one day). */
  LIFECYCLE_MESSAGE_RETENTION_MS: z.preprocess(
    blankToUndefined,
    z.coerce
      .number()
      .int()
      .min(1_000)
      .max(30 * 86_400_000)
      .default(86_400_000),
  ),
  /** Resume unfinished creations and cascades at startup (on by default). */
  LIFECYCLE_RECOVER_ON_START: z.preprocess(blankToUndefined, z.enum(['true', 'false']).default('true')).transform((v) => v === 'true'),
});
export type LifecycleConfig = z.infer<typeof lifecycleConfigSchema>;
