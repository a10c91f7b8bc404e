import { z } from 'zod';
import { commaList } from '@apphost/runtime';
import {
  appNameSchema,
  GovernedRenewView,
  GovernedReplayView,
  hostContextInputSchema,
  jsonRpcIdSchema,
  jsonRpcResponseSchema,
  openViewResponseSchema,
  sessionIdSchema,
  userIdSchema,
  VIEW_RPC_NOTIFICATIONS,
  VIEW_RPC_REQUESTS,
  viewIdSchema,
  viewSnapshotSchema,
} from '@apphost/contracts';

/** `POST /v1/views`: the widget to render (an event's descriptor, by event and function call) and the host page's context. */
export const openViewBodySchema = z.strictObject({
  appName: appNameSchema,
  sessionId: sessionIdSchema,
  eventId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  functionCallId: z.string().min(1).max(128),
  hostContext: hostContextInputSchema.optional(),
  /** Defaults to the token's subject; another user only with scope `delegate` (else 404). */
  userId: userIdSchema.optional(),
});
export type OpenViewBody = z.infer<typeof openViewBodySchema>;

/** `GET` and `DELETE /v1/views/{viewId}`: whom the caller acts for (a `delegate` principal naming its user). */
export const viewQuerySchema = z.strictObject({ userId: userIdSchema.optional() });

/** `POST /v1/views/{viewId}:renew`: the grant travels in `X-AppHost-View-Grant`, never in the body or URL. */
export const renewViewBodySchema = z.strictObject({ userId: userIdSchema.optional() });

/**
 * `POST /v1/views/{viewId}:refresh` and `:rerun`. Without `invocationId` the replay is keyed by the View and the
 * action, so a repeated click answers the same new event instead of running the tool again.
 */
export const replayViewBodySchema = z.strictObject({
  invocationId: z.string().min(1).max(128).optional(),
  hostContext: hostContextInputSchema.optional(),
  userId: userIdSchema.optional(),
});

/** The path segment of a View's custom methods: `<viewId>:renew`, `:refresh` or `:rerun`. */
export const VIEW_METHODS = ['renew', 'refresh', 'rerun'] as const;
export type ViewMethod = (typeof VIEW_METHODS)[number];
export const viewMethodSegmentSchema = z
  .string()
  .regex(/^vw-[0-9a-f]{32}:(renew|refresh|rerun)$/, 'expected <viewId>:renew, <viewId>:refresh or <viewId>:rerun')
  .transform((segment) => {
    const [viewId, method] = segment.split(':');
    return { viewId, method: method as ViewMethod };
  });

export const viewIdParamSchema = viewIdSchema;

/** The header that carries a View's grant (a host-held secret: never logged, never in a URL). */
export const VIEW_GRANT_HEADER = 'x-apphost-view-grant';

/** What the user attested on the host page for a View RPC, comma-separated (`message`: the user confirmed a `ui/message`). */
export const VIEW_ATTESTED_HEADER = 'x-apphost-user-attested';
export const VIEW_ATTESTATIONS = ['message'] as const;
export const viewAttestedHeaderSchema = z
  .string()
  .max(256)
  .optional()
  .transform(commaList)
  .pipe(z.array(z.enum(VIEW_ATTESTATIONS)));

export const viewResponseSchema = openViewResponseSchema;
export const viewStateSchema = viewSnapshotSchema;
export const renewViewReplySchema = GovernedRenewView.response;
/** As governed-operations answers, with the new View's document inline (the gateway fetches one held by reference). */
export const replayViewReplySchema = GovernedReplayView.response.extend({ view: openViewResponseSchema.nullable() });
export type ReplayViewReply = z.infer<typeof replayViewReplySchema>;

/**
 * The body of `POST /v1/views/{viewId}/rpc`, for the OpenAPI document only: the gateway forwards whatever JSON value
 * arrives and governed-operations validates it (against the published MCP / MCP Apps schemas) as the View's message.
 */
export const viewRpcMessageDocSchema = z.object({
  jsonrpc: z.literal('2.0'),
  /** Present on a request (answered 200), absent on a notification (answered 202). */
  id: jsonRpcIdSchema.optional(),
  method: z.enum([...VIEW_RPC_REQUESTS, ...VIEW_RPC_NOTIFICATIONS]),
  params: z.record(z.string(), z.unknown()).optional(),
});
export const viewRpcResponseSchema = jsonRpcResponseSchema;
