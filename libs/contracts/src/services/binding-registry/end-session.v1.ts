import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';

/**
 * `apphost.binding-registry.conn.<instanceId>.end-session.v1`: the deletion cascade's fan-out. The owner ends every
 * generation it holds that is keyed by the session at or below `incarnation` (closing its connection, so a stdio
 * server exits) and answers how many it ended; a repeat ends nothing and answers 0.
 */
export const ConnEndSession = defineContract({
  service: 'binding-registry',
  operation: 'end-session',
  version: 1,
  request: z.strictObject({ session: sessionKeySchema, incarnation: incarnationSchema }),
  response: z.object({ ended: z.number().int().min(0) }),
  errors: [],
});
