import { z } from 'zod';
import { appNameSchema, sessionIdSchema, userIdSchema } from '@apphost/contracts';
import { VIEW_TOKEN_DEFAULT_TTL_SECONDS, VIEW_TOKEN_MAX_TTL_SECONDS } from '../auth/view-tokens';
import { USER_ID_DESCRIPTION } from '../http/request-input';

/** `POST /v1/sessions/{sessionId}/view-tokens`: `userId` names the session's user (a delegate's), default the token's subject. */
export const viewTokenBodySchema = z.strictObject({
  appName: appNameSchema,
  userId: userIdSchema.optional().describe(USER_ID_DESCRIPTION),
  ttlSeconds: z.number().int().min(1).max(VIEW_TOKEN_MAX_TTL_SECONDS).default(VIEW_TOKEN_DEFAULT_TTL_SECONDS),
});

/** A minted view token: scope `view` only, for this one session, until `expiresAt`. */
export const viewTokenResponseSchema = z.strictObject({
  token: z.string(),
  expiresAt: z.string(),
  scope: z.literal('view'),
  sessionId: sessionIdSchema,
  appName: appNameSchema,
});
export type ViewTokenResponse = z.infer<typeof viewTokenResponseSchema>;
