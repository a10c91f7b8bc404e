import { randomUUID } from 'node:crypto';
import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  LifecycleCreateSession,
  LifecycleDeleteSession,
  LifecycleGetSession,
  LifecycleListEvents,
  LifecycleListSessions,
  type Principal,
  type SessionSnapshot,
} from '@apphost/contracts';
import { CurrentPrincipal, RequireScopes } from '../auth';
import { actingUserId, ownSessionKey, parseInput, sessionNotFound } from '../http/request-input';
import {
  createSessionBodySchema,
  eventsQuerySchema,
  listSessionsQuerySchema,
  sessionParamSchema,
  sessionQuerySchema,
  type PublicSession,
  type SessionList,
} from './sessions.schemas';

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
    const input = parseInput(createSessionBodySchema, body ?? {}, 'request body');
    const key = ownSessionKey(principal, input.appName, input.sessionId ?? randomUUID(), input.userId);
    const snapshot = await this.bus.request(LifecycleCreateSession, { session: key, creationOperationId: input.creationOperationId ?? randomUUID() });
    return toPublic(snapshot);
  }

  /** The caller's own sessions of one app (or, for a `delegate`, the named user's): the owner is the token's tenant. */
  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query() query: unknown): Promise<SessionList> {
    const q = parseInput(listSessionsQuerySchema, query, 'query');
    const owner = { tenant: principal.tenant, appName: q.appName, userId: actingUserId(principal, q.userId) };
    const { sessions } = await this.bus.request(LifecycleListSessions, { owner, limit: q.limit ?? 100 });
    return { appName: owner.appName, userId: owner.userId, sessions };
  }

  @Get(':sessionId')
  async get(@CurrentPrincipal() principal: Principal, @Param('sessionId') sessionId: string, @Query() query: unknown): Promise<PublicSession> {
    const q = parseInput(sessionQuerySchema, query, 'query');
    const snapshot = await this.bus.request(LifecycleGetSession, {
      session: ownSessionKey(principal, q.appName, parseInput(sessionParamSchema, sessionId, 'session id'), q.userId),
    });
    if (snapshot.state === 'DELETED') throw sessionNotFound();
    return toPublic(snapshot);
  }

  @Delete(':sessionId')
  @HttpCode(200)
  async delete(@CurrentPrincipal() principal: Principal, @Param('sessionId') sessionId: string, @Query() query: unknown): Promise<PublicSession> {
    const q = parseInput(sessionQuerySchema, query, 'query');
    const snapshot = await this.bus.request(LifecycleDeleteSession, {
      session: ownSessionKey(principal, q.appName, parseInput(sessionParamSchema, sessionId, 'session id'), q.userId),
    });
    return toPublic(snapshot);
  }

  @Get(':sessionId/events')
  async events(@CurrentPrincipal() principal: Principal, @Param('sessionId') sessionId: string, @Query() query: unknown) {
    const q = parseInput(eventsQuerySchema, query, 'query');
    const key = ownSessionKey(principal, q.appName, parseInput(sessionParamSchema, sessionId, 'session id'), q.userId);
    const page = await this.bus.request(LifecycleListEvents, { session: key, afterId: q.afterId, limit: q.limit, audience: q.audience });
    return {
      sessionId: key.sessionId,
      appName: key.appName,
      userId: key.userId,
      incarnation: page.incarnation,
      events: page.events,
      nextAfterId: page.nextAfterId,
    };
  }
}

function toPublic(snapshot: SessionSnapshot): PublicSession {
  return {
    sessionId: snapshot.session.sessionId,
    appName: snapshot.session.appName,
    userId: snapshot.session.userId,
    incarnation: snapshot.incarnation,
    state: snapshot.state,
  };
}
