import { randomUUID } from 'node:crypto';
import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import type { z } from 'zod';
import { BusClient } from '@apphost/bus';
import {
  AppHostError,
  invalidArgument,
  LifecycleCreateSession,
  LifecycleDeleteSession,
  LifecycleGetSession,
  LifecycleListEvents,
  type Principal,
  type SessionKey,
  type SessionView,
} from '@apphost/contracts';
import { CurrentPrincipal, RequireScopes } from '../auth';
import { createSessionBodySchema, eventsQuerySchema, sessionParamSchema, sessionQuerySchema, type PublicSession } from './sessions.schemas';

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidArgument(what, result.error);
  return result.data;
}

const notFound = () => new AppHostError('NOT_FOUND', 'session not found');

/**
 * The runtime API's session routes. The tenant and user come from the verified token: a principal only ever reaches
 * its own sessions, and anything else (another user, a deleted session) reads as 404. Every input is validated with
 * zod before anything is sent to the lifecycle-store.
 */
@Controller('v1/sessions')
@RequireScopes('runtime')
export class SessionsController {
  constructor(@Inject(BusClient) private readonly bus: BusClient) {}

  @Post()
  @HttpCode(201)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: unknown): Promise<PublicSession> {
    const input = parse(createSessionBodySchema, body ?? {}, 'request body');
    const key = this.keyFor(principal, input.appName, input.sessionId ?? randomUUID(), input.userId);
    const view = await this.bus.request(LifecycleCreateSession, { session: key, creationOperationId: input.creationOperationId ?? randomUUID() });
    return toPublic(view);
  }

  @Get(':sessionId')
  async get(@CurrentPrincipal() principal: Principal, @Param('sessionId') sessionId: string, @Query() query: unknown): Promise<PublicSession> {
    const q = parse(sessionQuerySchema, query, 'query');
    const view = await this.bus.request(LifecycleGetSession, { session: this.keyFor(principal, q.appName, parse(sessionParamSchema, sessionId, 'session id'), q.userId) });
    if (view.state === 'DELETED') throw notFound();
    return toPublic(view);
  }

  @Delete(':sessionId')
  @HttpCode(200)
  async delete(@CurrentPrincipal() principal: Principal, @Param('sessionId') sessionId: string, @Query() query: unknown): Promise<PublicSession> {
    const q = parse(sessionQuerySchema, query, 'query');
    const view = await this.bus.request(LifecycleDeleteSession, { session: this.keyFor(principal, q.appName, parse(sessionParamSchema, sessionId, 'session id'), q.userId) });
    return toPublic(view);
  }

  @Get(':sessionId/events')
  async events(@CurrentPrincipal() principal: Principal, @Param('sessionId') sessionId: string, @Query() query: unknown) {
    const q = parse(eventsQuerySchema, query, 'query');
    const key = this.keyFor(principal, q.appName, parse(sessionParamSchema, sessionId, 'session id'), q.userId);
    const page = await this.bus.request(LifecycleListEvents, { session: key, afterId: q.afterId, limit: q.limit });
    return { sessionId: key.sessionId, appName: key.appName, userId: key.userId, incarnation: page.incarnation, events: page.events, nextAfterId: page.nextAfterId };
  }

  /** The session key of a request: tenant and user from the principal; naming another user is indistinguishable from absence. */
  private keyFor(principal: Principal, appName: string, sessionId: string, userId: string | undefined): SessionKey {
    if (userId !== undefined && userId !== principal.subject) throw notFound();
    return { tenant: principal.tenant, appName, userId: principal.subject, sessionId };
  }
}

function toPublic(view: SessionView): PublicSession {
  return { sessionId: view.session.sessionId, appName: view.session.appName, userId: view.session.userId, incarnation: view.incarnation, state: view.state };
}
