import 'reflect-metadata';
import { BadRequestException, Controller, Get, Logger, Post, type LoggerService } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { AppHostError } from '@apphost/contracts';
import { ERROR_FILTER_LOGGER, HttpErrorFilter } from './error.filter';

@Controller()
class FailingController {
  @Get('boom')
  boom(): never {
    throw new Error('database password is hunter2');
  }

  @Get('missing')
  missing(): never {
    throw new AppHostError('NOT_FOUND', 'binding not found', { details: { binding: 'b1' } });
  }

  @Get('busy')
  busy(): never {
    throw new AppHostError('UNAVAILABLE', 'store unavailable');
  }

  @Get('precondition')
  precondition(): never {
    throw new AppHostError('FAILED_PRECONDITION', 'the session is not active', { details: { reason: 'SESSION_NOT_ACTIVE' } });
  }

  @Get('in-progress')
  inProgress(): never {
    throw new AppHostError('CONFLICT', 'being created', { retryable: true, details: { reason: 'CREATE_IN_PROGRESS', retryAfterMs: 1500 } });
  }

  @Get('nest-bad-request')
  badRequest(): never {
    throw new BadRequestException(['name must be a string']);
  }

  @Post('echo')
  echo(): { ok: true } {
    return { ok: true };
  }
}

const logged: { message: unknown; trace?: unknown }[] = [];
const logger: LoggerService = {
  log: () => undefined,
  warn: (message: unknown) => logged.push({ message }),
  error: (message: unknown, trace?: unknown) => logged.push({ message, trace }),
};

async function request(url: string, init?: RequestInit) {
  const response = await fetch(url, init);
  return {
    status: response.status,
    correlationId: response.headers.get('x-correlation-id'),
    body: (await response.json()) as { error: Record<string, unknown> },
  };
}

describe('HttpErrorFilter over HTTP', () => {
  let app: NestExpressApplication;
  let url: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [FailingController],
      providers: [
        { provide: ERROR_FILTER_LOGGER, useValue: logger },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
      ],
    }).compile();
    app = moduleRef.createNestApplication<NestExpressApplication>({ logger: false });
    app.useBodyParser('json', { limit: '1kb' });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(() => app.close());
  beforeEach(() => {
    logged.length = 0;
  });

  it('turns an unknown exception into a 500 INTERNAL with a correlation id, logging the stack server-side only', async () => {
    const { status, correlationId, body } = await request(`${url}/boom`);
    expect(status).toBe(500);
    expect(correlationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(body).toEqual({ error: { code: 'INTERNAL', message: 'internal error', retryable: false, correlationId } });
    expect(JSON.stringify(body)).not.toMatch(/hunter2|stack|\sat\s/);
    expect(logged).toHaveLength(1);
    expect(String(logged[0].message)).toContain(`GET /boom -> INTERNAL [${correlationId}]`);
    expect(String(logged[0].trace)).toContain('database password is hunter2');
    expect(String(logged[0].trace)).toContain('error.filter.spec.ts');
  });

  it('reuses a valid caller correlation id and replaces an unsafe one', async () => {
    const reused = await request(`${url}/boom`, { headers: { 'x-correlation-id': 'req-42.abc_DEF' } });
    expect(reused.correlationId).toBe('req-42.abc_DEF');
    expect(reused.body.error['correlationId']).toBe('req-42.abc_DEF');
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
      const replaced = await request(`${url}/boom`, { headers: { 'x-correlation-id': bad } });
      expect(replaced.correlationId).not.toBe(bad);
      expect(replaced.correlationId).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('maps an AppHostError to its status and envelope', async () => {
    const { status, correlationId, body } = await request(`${url}/missing`);
    expect(status).toBe(404);
    expect(correlationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(body).toEqual({ error: { code: 'NOT_FOUND', message: 'binding not found', retryable: false, details: { binding: 'b1' } } });
  });

  it('keeps a 5xx AppHostError message and marks it retryable as the code says', async () => {
    const { status, body } = await request(`${url}/busy`);
    expect(status).toBe(503);
    expect(body).toEqual({ error: { code: 'UNAVAILABLE', message: 'store unavailable', retryable: true } });
  });

  it('maps FAILED_PRECONDITION to 400, as gRPC-to-HTTP mappings do (never 412)', async () => {
    const { status, body } = await request(`${url}/precondition`);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'FAILED_PRECONDITION', retryable: false, details: { reason: 'SESSION_NOT_ACTIVE' } });
  });

  it('sets Retry-After (whole seconds, rounded up) for a retryable error with a retry hint, and not otherwise', async () => {
    const hinted = await fetch(`${url}/in-progress`);
    expect(hinted.status).toBe(409);
    expect(hinted.headers.get('retry-after')).toBe('2');
    expect(await hinted.json()).toMatchObject({ error: { code: 'CONFLICT', retryable: true, details: { retryAfterMs: 1500 } } });
    expect((await fetch(`${url}/busy`)).headers.get('retry-after')).toBeNull();
    expect((await fetch(`${url}/precondition`)).headers.get('retry-after')).toBeNull();
  });

  it('answers an unknown route with a 404 JSON envelope', async () => {
    const { status, body } = await request(`${url}/no/such/route`);
    expect(status).toBe(404);
    expect(body).toEqual({ error: { code: 'NOT_FOUND', message: 'Cannot GET /no/such/route', retryable: false } });
  });

  it('maps a body parse error to 400 INVALID_ARGUMENT', async () => {
    const { status, body } = await request(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'INVALID_ARGUMENT', retryable: false });
  });

  it('maps an oversized body to 413 PAYLOAD_TOO_LARGE', async () => {
    const { status, body } = await request(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 'x'.repeat(4096) }),
    });
    expect(status).toBe(413);
    expect(body).toEqual({ error: { code: 'PAYLOAD_TOO_LARGE', message: 'request entity too large', retryable: false } });
  });

  it('maps a Nest HttpException carrying a list of messages to INVALID_ARGUMENT with details', async () => {
    const { status, body } = await request(`${url}/nest-bad-request`);
    expect(status).toBe(400);
    expect(body).toEqual({ error: { code: 'INVALID_ARGUMENT', message: 'invalid request', retryable: false, details: { issues: ['name must be a string'] } } });
  });
});

describe('HttpErrorFilter registered with useGlobalFilters and the default logger', () => {
  it('still answers unknown routes and internal errors with the envelope', async () => {
    const errorSpy = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const moduleRef = await Test.createTestingModule({ controllers: [FailingController] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalFilters(new HttpErrorFilter());
    await app.listen(0, '127.0.0.1');
    try {
      const url = await app.getUrl();
      expect((await request(`${url}/nowhere`)).body.error).toMatchObject({ code: 'NOT_FOUND' });
      const internal = await request(`${url}/boom`);
      expect(internal.status).toBe(500);
      expect(internal.body.error['correlationId']).toBe(internal.correlationId);
      expect(errorSpy).toHaveBeenCalledWith(expect.stringContaining('INTERNAL'), expect.stringContaining('hunter2'));
    } finally {
      errorSpy.mockRestore();
      await app.close();
    }
  });
});
