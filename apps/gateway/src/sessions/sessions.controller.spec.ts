import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { SignJWT } from 'jose';
import { BusClient } from '@apphost/bus';
import { AppHostError, type BusContract, type SessionSnapshot } from '@apphost/contracts';
import { AuthModule } from '../auth/auth.module';
import { TokenVerifier } from '../auth/token-verifier';
import { HttpErrorFilter } from '../http/error.filter';
import { SessionsController } from './sessions.controller';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'apphost';
const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long!';

const sign = (claims: Record<string, unknown> = {}) =>
  new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', tenant: 'acme', scope: 'runtime', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));

/** A BusClient stand-in: records every request and answers from a script. */
class StubBus {
  readonly calls: { subject: string; payload: Record<string, unknown> }[] = [];
  reply: (subject: string, payload: Record<string, unknown>) => unknown = () => undefined;
  async request(contract: BusContract, payload: Record<string, unknown>): Promise<unknown> {
    this.calls.push({ subject: contract.subject, payload });
    return this.reply(contract.subject, payload);
  }
}

const snapshot = (payload: Record<string, unknown>, state: SessionSnapshot['state'] = 'ACTIVE'): SessionSnapshot => ({
  session: payload.session as SessionSnapshot['session'],
  incarnation: 1,
  state,
  version: 2,
  adopted: false,
  updatedAt: new Date(0).toISOString(),
  cascade: null,
});

describe('SessionsController (stubbed bus)', () => {
  let app: INestApplication;
  let base: string;
  const bus = new StubBus();

  beforeAll(async () => {
    const verifier = new TokenVerifier({ issuer: ISSUER, audience: AUDIENCE, key: { secret: SECRET } });
    const moduleRef = await Test.createTestingModule({
      imports: [AuthModule.forRoot(verifier, [])],
      controllers: [SessionsController],
      providers: [{ provide: BusClient, useValue: bus }],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalFilters(new HttpErrorFilter());
    await app.listen(0, '127.0.0.1');
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(() => app.close());
  beforeEach(() => {
    bus.calls.length = 0;
    bus.reply = (_subject, payload) => snapshot(payload);
  });

  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token ?? (await sign())}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('POST /v1/sessions: 201 with the public shape; tenant and user come from the token; ids default to fresh UUIDs', async () => {
    const res = await call('POST', '/v1/sessions', { appName: 'dash' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/), appName: 'dash', userId: 'alice', incarnation: 1, state: 'ACTIVE' });
    expect(bus.calls).toEqual([
      {
        subject: 'apphost.lifecycle-store.create-session.v1',
        payload: {
          session: { tenant: 'acme', appName: 'dash', userId: 'alice', sessionId: res.body.sessionId },
          creationOperationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        },
      },
    ]);
  });

  it.each([
    ['no appName', {}],
    ['a bad session id', { appName: 'dash', sessionId: 'has space' }],
    ['an unknown field', { appName: 'dash', tenant: 'other' }],
    ['a bad operation id', { appName: 'dash', creationOperationId: '' }],
  ])('POST with %s: 400 INVALID_ARGUMENT before any bus request', async (_label, body) => {
    const res = await call('POST', '/v1/sessions', body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    expect(bus.calls).toEqual([]);
  });

  it("another user's session reads as 404 without asking the store; GET and events need appName", async () => {
    expect((await call('GET', '/v1/sessions/s1?appName=dash&userId=bob')).status).toBe(404);
    expect((await call('DELETE', '/v1/sessions/s1?appName=dash&userId=bob')).status).toBe(404);
    expect((await call('POST', '/v1/sessions', { appName: 'dash', userId: 'bob' })).status).toBe(404);
    expect((await call('GET', '/v1/sessions/s1')).status).toBe(400);
    expect((await call('GET', '/v1/sessions/s1/events?appName=dash&limit=0')).status).toBe(400);
    expect(bus.calls).toEqual([]);
  });

  it('maps lifecycle errors to the envelope: CONFLICT 409, NOT_FOUND 404; a DELETED session reads as 404', async () => {
    bus.reply = () => {
      throw new AppHostError('CONFLICT', 'taken', { details: { reason: 'CREATE_IN_PROGRESS' } });
    };
    expect(await call('POST', '/v1/sessions', { appName: 'dash', sessionId: 's1' })).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT' } } });
    bus.reply = (_s, payload) => snapshot(payload, 'DELETED');
    expect((await call('GET', '/v1/sessions/s1?appName=dash')).status).toBe(404);
    expect(await call('DELETE', '/v1/sessions/s1?appName=dash')).toMatchObject({ status: 200, body: { state: 'DELETED', sessionId: 's1' } });
  });

  it('requires the runtime scope', async () => {
    const res = await call('GET', '/v1/sessions/s1?appName=dash', undefined, await sign({ scope: 'view' }));
    expect(res.status).toBe(403);
    expect(bus.calls).toEqual([]);
  });

  it('GET /v1/sessions/{id}/events passes paging through and answers with the page', async () => {
    bus.reply = () => ({ incarnation: 3, events: [], nextAfterId: null });
    const res = await call('GET', '/v1/sessions/s1/events?appName=dash&afterId=10&limit=5');
    expect(res).toEqual({ status: 200, body: { sessionId: 's1', appName: 'dash', userId: 'alice', incarnation: 3, events: [], nextAfterId: null } });
    expect(bus.calls[0].payload).toEqual({
      session: { tenant: 'acme', appName: 'dash', userId: 'alice', sessionId: 's1' },
      afterId: 10,
      limit: 5,
      audience: 'model',
    });
  });

  it('GET /v1/sessions/{id}/events leaves app audit events out unless ?audience=all; any other audience is 400', async () => {
    bus.reply = () => ({ incarnation: 1, events: [], nextAfterId: null });
    expect((await call('GET', '/v1/sessions/s1/events?appName=dash')).status).toBe(200);
    expect((await call('GET', '/v1/sessions/s1/events?appName=dash&audience=model')).status).toBe(200);
    expect((await call('GET', '/v1/sessions/s1/events?appName=dash&audience=all')).status).toBe(200);
    expect(bus.calls.map((c) => c.payload.audience)).toEqual(['model', 'model', 'all']);
    bus.calls.length = 0;
    for (const audience of ['app_audit', 'ALL', '']) {
      const res = await call('GET', `/v1/sessions/s1/events?appName=dash&audience=${audience}`);
      expect(res).toMatchObject({ status: 400, body: { error: { code: 'INVALID_ARGUMENT' } } });
    }
    expect(bus.calls).toEqual([]);
  });

  it("GET /v1/sessions?appName= lists the caller's own sessions: the owner is the token's tenant and user (a delegate's named user)", async () => {
    const summary = { sessionId: 's1', incarnation: 1, state: 'ACTIVE', createdAt: new Date(0).toISOString() };
    bus.reply = () => ({ sessions: [summary] });
    const res = await call('GET', '/v1/sessions?appName=dash&limit=5');
    expect(res).toEqual({ status: 200, body: { appName: 'dash', userId: 'alice', sessions: [summary] } });
    expect(bus.calls).toEqual([
      { subject: 'apphost.lifecycle-store.list-sessions.v1', payload: { owner: { tenant: 'acme', appName: 'dash', userId: 'alice' }, limit: 5 } },
    ]);
    bus.calls.length = 0;
    await call('GET', '/v1/sessions?appName=dash&userId=bob', undefined, await sign({ scope: 'runtime delegate' }));
    expect(bus.calls[0].payload).toEqual({ owner: { tenant: 'acme', appName: 'dash', userId: 'bob' }, limit: 100 });
  });

  it("GET /v1/sessions: another user's list is 404 without delegate; appName is required; nothing asked", async () => {
    expect((await call('GET', '/v1/sessions?appName=dash&userId=bob')).status).toBe(404);
    expect((await call('GET', '/v1/sessions')).status).toBe(400);
    expect((await call('GET', '/v1/sessions?appName=dash&limit=500')).status).toBe(400);
    expect(bus.calls).toEqual([]);
  });
});
