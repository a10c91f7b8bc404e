import { Body, Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import type { z } from 'zod';
import { BusClient } from '@apphost/bus';
import { AppHostError, confirmationIdSchema, GovernedDecideConfirmation, GovernedRunToolBatch, invalidArgument, sessionIdSchema, type Principal, type RunToolBatchResponse } from '@apphost/contracts';
import { CurrentPrincipal, RequireScopes } from '../auth';
import { confirmationDecisionBodySchema, toolBatchBodySchema } from './tool-batches.schemas';

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidArgument(what, result.error);
  return result.data;
}

/** Upper bound of one batch through the bus: classification, every call (run concurrently), sealing and the append. */
const BATCH_TIMEOUT_MS = 180_000;

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
    const input = parse(toolBatchBodySchema, body ?? {}, 'request body');
    const session = sessionOf(principal, input, sessionId);
    return this.bus.request(GovernedRunToolBatch, { principal, session, invocationId: input.invocationId, calls: input.calls }, { timeoutMs: BATCH_TIMEOUT_MS });
  }

  @Post(':sessionId/confirmations/:confirmationId')
  @HttpCode(200)
  decide(@CurrentPrincipal() principal: Principal, @Param('sessionId') sessionId: string, @Param('confirmationId') confirmationId: string, @Body() body: unknown): Promise<RunToolBatchResponse> {
    const input = parse(confirmationDecisionBodySchema, body ?? {}, 'request body');
    const session = sessionOf(principal, input, sessionId);
    return this.bus.request(
      GovernedDecideConfirmation,
      { principal, session, confirmationId: parse(confirmationIdSchema, confirmationId, 'confirmation id'), confirmed: input.confirmed },
      { timeoutMs: BATCH_TIMEOUT_MS },
    );
  }
}

/** The session key of a runtime call: always the token's own tenant and subject (another user reads as 404). */
function sessionOf(principal: Principal, input: { appName: string; userId?: string }, sessionId: string) {
  if (input.userId !== undefined && input.userId !== principal.subject) throw new AppHostError('NOT_FOUND', 'session not found');
  return { tenant: principal.tenant, appName: input.appName, userId: principal.subject, sessionId: parse(sessionIdSchema, sessionId, 'session id') };
}
