import { z } from 'zod';
import { incarnationSchema, sessionKeySchema } from '../../lib/values';
import { viewIdSchema, widgetIdSchema } from '../governed-operations/view-values';

/**
 * Pending `ui/message`s: a user message a View sent, held durably by the lifecycle-store (PostgreSQL,
 * incarnation-scoped) until a runtime consumes it exactly once.
 *
 * `RECORDED` → `ACCEPTED` (the View got `{}`; it belongs to the conversation now) → `CLAIMED` (one runtime holds a
 * fenced, expiring claim) → `CONSUMED` (a model turn took it, exactly once). `EXPIRED`: recorded but never accepted
 * (the host stopped between record and accept), or accepted and never consumed within the retention. `REJECTED`: the
 * View was torn down before acceptance, or at claim time the session, principal or binding no longer holds.
 * A `CLAIMED` message whose claim expired is claimable again.
 */
export const MESSAGE_STATES = ['RECORDED', 'ACCEPTED', 'CLAIMED', 'CONSUMED', 'EXPIRED', 'REJECTED'] as const;
export const messageStateSchema = z.enum(MESSAGE_STATES);
export type MessageState = z.infer<typeof messageStateSchema>;

/** `msg-` and 32 hex digits, minted by governed-operations. */
export const messageIdSchema = z.string().regex(/^msg-[0-9a-f]{32}$/, 'message id: msg- and 32 hex digits');

export const MESSAGE_REJECTIONS = ['VIEW_TORN_DOWN', 'SESSION_DELETED', 'PRINCIPAL_REVOKED', 'TOOLSET_REVOKED', 'TOOLSET_REBOUND'] as const;
export const messageRejectionSchema = z.enum(MESSAGE_REJECTIONS);
export type MessageRejection = z.infer<typeof messageRejectionSchema>;

/** The text content of a message (the only advertised modality). */
export const messageContentSchema = z
  .array(z.strictObject({ type: z.literal('text'), text: z.string().max(64 * 1024) }))
  .min(1)
  .max(32);

/** A pending message as the store serves it. The claim token is never in it (only its holder has it). */
export const pendingMessageSchema = z.strictObject({
  messageId: messageIdSchema,
  session: sessionKeySchema,
  incarnation: incarnationSchema,
  state: messageStateSchema,
  role: z.literal('user'),
  content: messageContentSchema,
  /** Exact identity: which View of which widget sent it, and a nonce only governed-operations knows the source of. */
  viewId: viewIdSchema,
  widgetId: widgetIdSchema,
  nonce: z.string().regex(/^[0-9a-f]{32}$/),
  /** The toolset binding the View was bound to (a claim re-checks it is still current). */
  toolsetId: z.string(),
  bindingRevision: z.string(),
  bindingGeneration: z.number().int().min(1),
  /** The View's opener (a claim re-checks the principal is not revoked). */
  principal: z.strictObject({ tenant: z.string(), subject: z.string() }),
  rejection: messageRejectionSchema.nullable(),
  claimExpiresAt: z.string().nullable(),
  /** The invocation that consumed it (set with CONSUMED). */
  invocationId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type PendingMessage = z.infer<typeof pendingMessageSchema>;
