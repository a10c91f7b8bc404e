import { Body, Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  confirmationIdSchema,
  GovernedDecideConfirmation,
  GovernedRunToolBatch,
  sessionIdSchema,
  type Principal,
  type RunToolBatchResponse,
} from '@apphost/contracts';
import { admitArguments } from '@apphost/policy';
import { CurrentPrincipal, RequireScopes } from '../auth';
import { actingPrincipal, ownSessionKey, parseInput } from '../http/request-input';
import { confirmationDecisionBodySchema, toolBatchBodySchema } from './tool-batches.schemas';

/** A batch may take as long as the HTTP request's deadline allows (HTTP_REQUEST_TIMEOUT_MS, or the caller's shorter one). */
const BATCH_TIMEOUT = { timeoutMs: 'until-deadline' } as const;

/**
 * `POST /v1/sessions/{id}/tool-batches` (runtime scope): a model turn's tool calls, run by governed-operations;
 * `POST /v1/sessions/{id}/confirmations/{confirmationId}`: the user's decision on a call held for confirmation.
 */
@Controller('v1/sessions')
@RequireScopes('runtime')
export class ToolBatchesController {
  constructor(@Inject(BusClient) private readonly bus: BusClient) {}

  @Post(':sessionId/tool-batches')
  @HttpCode(200)
  run(@CurrentPrincipal() principal: Principal, @Param('sessionId') sessionId: string, @Body() body: unknown): Promise<RunToolBatchResponse> {
    const input = parseInput(toolBatchBodySchema, body ?? {}, 'request body');
    // Here, while the body is still what JSON.parse made of it (the bus codec would turn Infinity into null).
    admitArguments(input.calls);
    const session = ownSessionKey(principal, input.appName, parseInput(sessionIdSchema, sessionId, 'session id'), input.userId);
    return this.bus.request(
      GovernedRunToolBatch,
      { principal: actingPrincipal(principal, session), session, invocationId: input.invocationId, calls: input.calls },
      BATCH_TIMEOUT,
    );
  }

  @Post(':sessionId/confirmations/:confirmationId')
  @HttpCode(200)
  decide(
    @CurrentPrincipal() principal: Principal,
    @Param('sessionId') sessionId: string,
    @Param('confirmationId') confirmationId: string,
    @Body() body: unknown,
  ): Promise<RunToolBatchResponse> {
    const input = parseInput(confirmationDecisionBodySchema, body ?? {}, 'request body');
    const session = ownSessionKey(principal, input.appName, parseInput(sessionIdSchema, sessionId, 'session id'), input.userId);
    return this.bus.request(
      GovernedDecideConfirmation,
      {
        principal: actingPrincipal(principal, session),
        session,
        confirmationId: parseInput(confirmationIdSchema, confirmationId, 'confirmation id'),
        confirmed: input.confirmed,
      },
      BATCH_TIMEOUT,
    );
  }
}
