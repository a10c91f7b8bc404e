import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { BusClient, RequestContexts } from '@apphost/bus';
import { GovernedClaimMessage, LifecycleConsumeMessage, LifecycleListMessages, sessionIdSchema, type Principal } from '@apphost/contracts';
import { CurrentPrincipal, RequireScopes, SCOPES } from '../auth';
import { actingPrincipal, ownSessionKey, parseInput } from '../http/request-input';
import {
  claimMessageBodySchema,
  consumeMessageBodySchema,
  messageMethodSegmentSchema,
  messagesQuerySchema,
  toPublicMessage,
  type ClaimedMessage,
  type ConsumedMessage,
  type MessagesPage,
} from './conversation.schemas';
import { longPollBudget } from './long-poll';

interface HeaderResponse {
  setHeader(name: string, value: string): unknown;
}

/**
 * The runtime's side of `ui/message` (scope `runtime`): `GET /v1/sessions/{sessionId}/messages` lists (long-polls)
 * the session's pending messages; `POST …/messages/{messageId}:claim` takes a fenced, expiring claim through
 * governed-operations (which re-checks principal, session and binding first); `:consume` marks the message taken by
 * one invocation, exactly once. Only the claim's answer carries the claim token; nothing here is cached.
 */
@Controller('v1/sessions')
@RequireScopes(SCOPES.runtime)
export class MessagesController {
  constructor(@Inject(BusClient) private readonly bus: BusClient) {}

  @Get(':sessionId/messages')
  async list(
    @CurrentPrincipal() principal: Principal,
    @Param('sessionId') sessionId: string,
    @Query() query: unknown,
    @Res({ passthrough: true }) res: HeaderResponse,
  ): Promise<MessagesPage> {
    const q = parseInput(messagesQuerySchema, query, 'query');
    const session = ownSessionKey(principal, q.appName, parseInput(sessionIdSchema, sessionId, 'session id'), q.userId);
    const budget = longPollBudget(q.waitMs, RequestContexts.current()?.deadline);
    const page = await this.bus.request(
      LifecycleListMessages,
      { session, waitMs: budget.waitMs, limit: q.limit, ...(q.state ? { state: q.state } : {}) },
      { timeoutMs: budget.timeoutMs },
    );
    res.setHeader('Cache-Control', 'no-store');
    return {
      sessionId: session.sessionId,
      appName: session.appName,
      userId: session.userId,
      incarnation: page.incarnation,
      messages: page.messages.map(toPublicMessage),
    };
  }

  /** `:claim` and `:consume` arrive in the same path segment as the id. */
  @Post(':sessionId/messages/:messageId')
  @HttpCode(200)
  async method(
    @CurrentPrincipal() principal: Principal,
    @Param('sessionId') sessionId: string,
    @Param('messageId') segment: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: HeaderResponse,
  ): Promise<ClaimedMessage | ConsumedMessage> {
    const { messageId, method } = parseInput(messageMethodSegmentSchema, segment, 'message custom method');
    const id = parseInput(sessionIdSchema, sessionId, 'session id');
    res.setHeader('Cache-Control', 'no-store');
    if (method === 'claim') {
      const input = parseInput(claimMessageBodySchema, body ?? {}, 'request body');
      const session = ownSessionKey(principal, input.appName, id, input.userId);
      const claimed = await this.bus.request(GovernedClaimMessage, {
        principal: actingPrincipal(principal, session),
        session,
        messageId,
        ...(input.claimTtlMs !== undefined ? { claimTtlMs: input.claimTtlMs } : {}),
      });
      return { message: toPublicMessage(claimed.message), claimToken: claimed.claimToken, claimExpiresAt: claimed.claimExpiresAt };
    }
    const input = parseInput(consumeMessageBodySchema, body ?? {}, 'request body');
    const session = ownSessionKey(principal, input.appName, id, input.userId);
    const consumed = await this.bus.request(LifecycleConsumeMessage, { session, messageId, claimToken: input.claimToken, invocationId: input.invocationId });
    return { message: toPublicMessage(consumed.message) };
  }
}
