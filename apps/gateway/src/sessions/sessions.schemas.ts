import { z } from 'zod';
import {
  appNameSchema,
  creationOperationIdSchema,
  publicEventSchema,
  sessionIdSchema,
  sessionStateSchema,
  sessionSummarySchema,
  userIdSchema,
} from '@apphost/contracts';
import { USER_ID_DESCRIPTION } from '../http/request-input';

/** `POST /v1/sessions` body; `userId` defaults to the principal's subject (another user only for a `delegate`, else 404). */
export const createSessionBodySchema = z
  .object({
    appName: appNameSchema,
    sessionId: sessionIdSchema.optional(),
    creationOperationId: creationOperationIdSchema.optional(),
    userId: userIdSchema.optional().describe(USER_ID_DESCRIPTION),
  })
  .strict();

export const sessionQuerySchema = z.object({ appName: appNameSchema, userId: userIdSchema.optional() }).strict();

export const EVENTS_AUDIENCES = ['model', 'all'] as const;

export const eventsQuerySchema = z
  .object({
    appName: appNameSchema,
    userId: userIdSchema.optional(),
    afterId: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    limit: z.coerce.number().int().min(1).max(500).optional(),
    /** `model` (default): what a model may see, without app audit events; `all`: every event, app audit events too. */
    audience: z.enum(EVENTS_AUDIENCES).default('model'),
  })
  .strict();

/** `GET /v1/sessions`: one app's sessions of the caller (or of the user a `delegate` names). */
export const listSessionsQuerySchema = z
  .object({ appName: appNameSchema, userId: userIdSchema.optional(), limit: z.coerce.number().int().min(1).max(200).optional() })
  .strict();

export const sessionListSchema = z.object({ appName: appNameSchema, userId: userIdSchema, sessions: z.array(sessionSummarySchema) });
export type SessionList = z.infer<typeof sessionListSchema>;

export const sessionParamSchema = sessionIdSchema;

/** The public session shape: no version, receipts, digests or cascade internals. */
export const publicSessionSchema = z.object({
  sessionId: sessionIdSchema,
  appName: appNameSchema,
  userId: userIdSchema,
  incarnation: z.number().int().min(1),
  state: sessionStateSchema,
});
export type PublicSession = z.infer<typeof publicSessionSchema>;

export const eventsPageSchema = z.object({
  sessionId: sessionIdSchema,
  appName: appNameSchema,
  userId: userIdSchema,
  incarnation: z.number().int().min(1),
  events: z.array(publicEventSchema),
  nextAfterId: z.number().int().min(1).nullable(),
});
