import { z } from 'zod';
import {
  appNameSchema,
  GovernedGetModelContext,
  incarnationSchema,
  LifecycleListMessages,
  messageIdSchema,
  pendingMessageSchema,
  sessionIdSchema,
  userIdSchema,
  type PendingMessage,
} from '@apphost/contracts';
import { USER_ID_DESCRIPTION } from '../http/request-input';

/** `GET /v1/sessions/{sessionId}/model-context`: whose session. */
export const modelContextQuerySchema = z.strictObject({ appName: appNameSchema, userId: userIdSchema.optional() });

/** What the model sees on its next turn, as governed-operations computes it (reading it consumes nothing). */
export const modelContextResponseSchema = GovernedGetModelContext.response;

/** The longest long poll (the lifecycle-store's own bound). */
export const MESSAGES_MAX_WAIT_MS = 30_000;

/** The states a runtime may list by (`RECORDED` is the store's own: never listed). */
export const LISTED_MESSAGE_STATES = LifecycleListMessages.request.shape.state.unwrap().options;

/** `GET /v1/sessions/{sessionId}/messages`: one state (a closed set) or all, and how long to wait for a first match. */
export const messagesQuerySchema = z.strictObject({
  appName: appNameSchema,
  userId: userIdSchema.optional(),
  state: z.enum(LISTED_MESSAGE_STATES).optional(),
  waitMs: z.coerce.number().int().min(0).max(MESSAGES_MAX_WAIT_MS).default(0),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

/** The path segment of a message's custom methods: `<messageId>:claim` or `<messageId>:consume`. */
export const MESSAGE_METHODS = ['claim', 'consume'] as const;
export type MessageMethod = (typeof MESSAGE_METHODS)[number];
export const messageMethodSegmentSchema = z
  .string()
  .regex(/^msg-[0-9a-f]{32}:(claim|consume)$/, 'expected <messageId>:claim or <messageId>:consume')
  .transform((segment) => {
    const [messageId, method] = segment.split(':');
    return { messageId: messageIdSchema.parse(messageId), method: method as MessageMethod };
  });

/** `POST …/messages/{messageId}:claim`: how long the claim lasts (1 s – 1 h; 60 s by default). */
export const claimMessageBodySchema = z.strictObject({
  appName: appNameSchema,
  userId: userIdSchema.optional().describe(USER_ID_DESCRIPTION),
  claimTtlMs: z.number().int().min(1_000).max(3_600_000).optional(),
});

/** `POST …/messages/{messageId}:consume`: the live claim's token and the invocation (model turn) that takes the message. */
export const consumeMessageBodySchema = z.strictObject({
  appName: appNameSchema,
  userId: userIdSchema.optional().describe(USER_ID_DESCRIPTION),
  claimToken: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'a claim token: 43 base64url characters'),
  invocationId: z.string().min(1).max(128),
});

/**
 * A pending message as a runtime sees it: its identity (message, View, widget, nonce), state and content. The
 * binding and the View opener the store keeps for the claim's re-checks stay inside; a claim token never appears.
 */
export const publicMessageSchema = pendingMessageSchema.pick({
  messageId: true,
  incarnation: true,
  state: true,
  role: true,
  content: true,
  viewId: true,
  widgetId: true,
  nonce: true,
  rejection: true,
  claimExpiresAt: true,
  invocationId: true,
  createdAt: true,
  updatedAt: true,
});
export type PublicMessage = z.infer<typeof publicMessageSchema>;

export function toPublicMessage(message: PendingMessage): PublicMessage {
  return {
    messageId: message.messageId,
    incarnation: message.incarnation,
    state: message.state,
    role: message.role,
    content: message.content,
    viewId: message.viewId,
    widgetId: message.widgetId,
    nonce: message.nonce,
    rejection: message.rejection,
    claimExpiresAt: message.claimExpiresAt,
    invocationId: message.invocationId,
    createdAt: message.createdAt,
    updatedAt: message.updatedAt,
  };
}

export const messagesPageSchema = z.strictObject({
  sessionId: sessionIdSchema,
  appName: appNameSchema,
  userId: userIdSchema,
  incarnation: incarnationSchema,
  messages: z.array(publicMessageSchema),
});
export type MessagesPage = z.infer<typeof messagesPageSchema>;

/** The claim's answer: the only place the token is ever shown. */
export const claimedMessageSchema = z.strictObject({ message: publicMessageSchema, claimToken: z.string(), claimExpiresAt: z.string() });
export type ClaimedMessage = z.infer<typeof claimedMessageSchema>;

export const consumedMessageSchema = z.strictObject({ message: publicMessageSchema });
export type ConsumedMessage = z.infer<typeof consumedMessageSchema>;
