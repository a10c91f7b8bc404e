import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sessionKeySchema } from '../../lib/values';
import { sessionSnapshotSchema } from './values';

/** `apphost.lifecycle-store.get-session.v1`: the lifecycle record; a legacy session row is adopted as `ACTIVE(1)` on first touch. */
export const LifecycleGetSession = defineContract({
  service: 'lifecycle-store',
  operation: 'get-session',
  version: 1,
  request: z.object({ session: sessionKeySchema }).strict(),
  response: sessionSnapshotSchema,
  errors: ['NOT_FOUND'],
});
