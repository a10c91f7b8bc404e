import { AppHostError, IDEMPOTENCY_META_KEY, jsonRpcCodeOf, viewPolicyOf, type ViewPolicy } from '@apphost/contracts';
import { expectAppError } from '@apphost/testing';
import { testProfile } from '../test/fake-plane';
import { RpcMessageAdmission } from './rpc-admission';

const admission = new RpcMessageAdmission();
const policy: ViewPolicy = viewPolicyOf({ ...testProfile(), rpc: { maxRequestBytes: 4096 } });
const parse = (message: unknown, bytes = 100) => admission.parse(message, bytes, policy);
const request = (method: string, params?: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const notification = (method: string, params?: unknown) => ({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
const withKey = (key: unknown) => ({ _meta: { [IDEMPOTENCY_META_KEY]: key } });

/** The refusal, its reason, and what it answers (`details.id` / `details.notification`), as the JSON-RPC error it becomes. */
function refusalOf(message: unknown, bytes = 100) {
  try {
    parse(message, bytes);
  } catch (error) {
    if (!(error instanceof AppHostError)) throw error;
    const reason = error.details?.['reason'] as string;
    return { code: error.code, reason, jsonRpc: jsonRpcCodeOf(error.code, reason), id: error.details?.['id'], notification: error.details?.['notification'] };
  }
  throw new Error('expected a refusal');
}

describe('RpcMessageAdmission.parse', () => {
  describe('size', () => {
    it('refuses a message over the profile limit, answering its id when it has one', async () => {
      expect(refusalOf(request('ping', undefined, 7), 4097)).toEqual({
        code: 'PAYLOAD_TOO_LARGE',
        reason: 'RPC_REQUEST_TOO_LARGE',
        jsonRpc: -32006,
        id: 7,
        notification: undefined,
      });
      expect(refusalOf(notification('ui/notifications/initialized'), 4097)).toMatchObject({
        reason: 'RPC_REQUEST_TOO_LARGE',
        id: undefined,
        notification: true,
      });
      expect(refusalOf([request('ping')], 5000)).toMatchObject({ reason: 'RPC_REQUEST_TOO_LARGE', id: undefined });
      const error = await expectAppError(() => parse(request('ping'), 4097));
      expect(error.details).toMatchObject({ bytes: 4097, limit: 4096 });
    });

    it('admits a message of exactly the limit', () => {
      expect(parse(request('ping'), 4096)).toEqual({ kind: 'request', id: 1, method: 'ping', params: {}, idempotencyKey: null });
    });
  });

  describe('envelope', () => {
    it.each([
      ['a batch', [request('ping')]],
      ['no jsonrpc and no id', { method: 'ping' }],
      ['a notification with a member too many', { ...notification('ui/notifications/initialized'), extra: true }],
      ['an empty batch', []],
      ['null', null],
      ['a string', 'ping'],
      ['a number', 5],
      ['a null id', request('ping', undefined, null)],
      ['a fractional id', request('ping', undefined, 1.5)],
      ['an unsafe integer id', request('ping', undefined, 2 ** 53)],
      ['a boolean id', request('ping', undefined, true)],
      ['an object id', request('ping', undefined, { n: 1 })],
      ['a string id over 256 chars', request('ping', undefined, 'x'.repeat(257))],
    ])('refuses %s as RPC_INVALID_REQUEST (-32600), answering no id', (_, message) => {
      expect(refusalOf(message)).toEqual({ code: 'INVALID_ARGUMENT', reason: 'RPC_INVALID_REQUEST', jsonRpc: -32600, id: undefined, notification: undefined });
    });

    it.each([
      ['a member too many', { ...request('ping', undefined, 'abc'), extra: true }, 'abc'],
      ['no jsonrpc', { id: 1, method: 'ping' }, 1],
      ['jsonrpc 1.0', { jsonrpc: '1.0', id: 9, method: 'ping' }, 9],
      ['no method', { jsonrpc: '2.0', id: 'm' }, 'm'],
      ['a method that is not a string', { jsonrpc: '2.0', id: 3, method: 42 }, 3],
      ['a response', { jsonrpc: '2.0', id: 4, result: {} }, 4],
    ])('refuses %s as RPC_INVALID_REQUEST, answering the id it could read', (_, message, id) => {
      expect(refusalOf(message)).toEqual({ code: 'INVALID_ARGUMENT', reason: 'RPC_INVALID_REQUEST', jsonRpc: -32600, id, notification: undefined });
    });

    it.each([
      ['zero', 0],
      ['a negative integer', -12],
      ['the largest safe integer', Number.MAX_SAFE_INTEGER],
      ['an empty string', ''],
      ['a 256-char string', 'x'.repeat(256)],
    ])('admits %s as an id', (_, id) => {
      expect(parse(request('ping', undefined, id))).toMatchObject({ kind: 'request', id });
    });
  });

  describe('methods', () => {
    it('refuses an unknown request as RPC_METHOD_NOT_FOUND (-32601), answering its id', () => {
      expect(refusalOf(request('sampling/createMessage', {}, 'r1'))).toEqual({
        code: 'NOT_FOUND',
        reason: 'RPC_METHOD_NOT_FOUND',
        jsonRpc: -32601,
        id: 'r1',
        notification: undefined,
      });
      expect(refusalOf(request('ui/open-link', { url: 'https://example.com' }, 2))).toMatchObject({ reason: 'RPC_METHOD_NOT_FOUND', id: 2 });
      // A notification's method sent as a request is not served either.
      expect(refusalOf(request('notifications/message', { level: 'info', data: 1 }, 3))).toMatchObject({ reason: 'RPC_METHOD_NOT_FOUND', id: 3 });
    });

    it('reports an unknown notification as one (never answered: the caller logs and ignores it)', async () => {
      expect(refusalOf(notification('notifications/roots/list_changed'))).toEqual({
        code: 'NOT_FOUND',
        reason: 'RPC_METHOD_NOT_FOUND',
        jsonRpc: -32601,
        id: undefined,
        notification: true,
      });
      // A request method sent without an id is a notification, and not a served one.
      expect(refusalOf(notification('tools/call', { name: 't' }))).toMatchObject({ reason: 'RPC_METHOD_NOT_FOUND', notification: true });
      const error = await expectAppError(() => parse(notification('x'.repeat(1000))));
      expect((error.details?.['method'] as string).length).toBe(128);
    });
  });

  describe('params against the published schemas', () => {
    it.each([
      ['tools/call', { name: 'poll', arguments: { a: 1 } }, { name: 'poll', arguments: { a: 1 } }],
      ['tools/call', { name: 'poll', unknownMember: 1 }, { name: 'poll' }],
      ['resources/read', { uri: 'ui://app/doc' }, { uri: 'ui://app/doc' }],
      ['ping', undefined, {}],
      ['ping', {}, {}],
      ['tools/list', undefined, {}],
      ['tools/list', { cursor: 'c2' }, { cursor: 'c2' }],
      ['resources/list', { cursor: 'c' }, { cursor: 'c' }],
      ['resources/templates/list', undefined, {}],
      // ui/message: the published array form (what App.sendMessage sends), and one block read as that array.
      ['ui/message', { role: 'user', content: [{ type: 'text', text: 'hi' }] }, { role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      ['ui/message', { role: 'user', content: { type: 'text', text: 'hi' } }, { role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      [
        'ui/message',
        { role: 'user', content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }] },
        { role: 'user', content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }] },
      ],
    ])('admits the request %s with params %j', (method, params, expected) => {
      expect(parse(request(method, params, 5))).toEqual({ kind: 'request', id: 5, method, params: expected, idempotencyKey: null });
    });

    it.each([
      ['notifications/cancelled', { requestId: 4, reason: 'user left' }, { requestId: 4, reason: 'user left' }],
      ['notifications/message', { level: 'warning', logger: 'ui', data: { n: 1 } }, { level: 'warning', logger: 'ui', data: { n: 1 } }],
      ['ui/notifications/initialized', undefined, {}],
      ['ui/notifications/size-changed', { width: 640, height: 480 }, { width: 640, height: 480 }],
      ['ui/notifications/request-teardown', undefined, {}],
      ['ui/notifications/request-teardown', {}, {}],
    ])('admits the notification %s with params %j', (method, params, expected) => {
      expect(parse(notification(method, params))).toEqual({ kind: 'notification', method, params: expected });
    });

    it.each([
      ['tools/call', undefined],
      ['tools/call', { arguments: {} }],
      ['tools/call', { name: 'poll', arguments: [1] }],
      ['tools/call', { name: 'poll', _meta: 'x' }],
      ['resources/read', {}],
      ['resources/read', { uri: 42 }],
      ['ping', 5],
      ['tools/list', { cursor: 5 }],
      ['resources/list', { cursor: [] }],
      ['resources/templates/list', { cursor: 1 }],
      ['tools/call', [1, 2]],
      ['ui/message', undefined],
      ['ui/message', { role: 'assistant', content: [{ type: 'text', text: 'hi' }] }],
      ['ui/message', { content: [{ type: 'text', text: 'hi' }] }],
      ['ui/message', { role: 'user', content: 'hi' }],
      ['ui/message', { role: 'user', content: { type: 'text' } }],
      ['ui/message', { role: 'user', content: [{ type: 'text', text: 5 }] }],
    ])('refuses the request %s with params %j as RPC_INVALID_PARAMS (-32602), answering its id', (method, params) => {
      expect(refusalOf(request(method, params, 'p'))).toEqual({
        code: 'INVALID_ARGUMENT',
        reason: 'RPC_INVALID_PARAMS',
        jsonRpc: -32602,
        id: 'p',
        notification: undefined,
      });
    });

    it.each([
      ['notifications/cancelled', undefined],
      ['notifications/cancelled', { requestId: null }],
      ['notifications/message', { level: 'loud', data: 1 }],
      ['notifications/message', { level: 'info' }],
      ['ui/notifications/initialized', 'x'],
      ['ui/notifications/size-changed', undefined],
      ['ui/notifications/size-changed', { width: 'wide' }],
      ['ui/notifications/request-teardown', 'now'],
    ])('reports the notification %s with params %j as RPC_INVALID_PARAMS', (method, params) => {
      expect(refusalOf(notification(method, params))).toEqual({
        code: 'INVALID_ARGUMENT',
        reason: 'RPC_INVALID_PARAMS',
        jsonRpc: -32602,
        id: undefined,
        notification: true,
      });
    });

    it('bounds what a refusal repeats of a hostile message', async () => {
      const hostile = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${'k'.repeat(10_000)}${i}`, i]));
      const error = await expectAppError(() => parse({ ...request('ping'), ...hostile }));
      expect(JSON.stringify(error.details).length).toBeLessThan(8 * 600);
    });

    it('says where the params are malformed', async () => {
      const error = await expectAppError(() => parse(request('tools/call', { arguments: {} })));
      expect(error.details).toMatchObject({ method: 'tools/call', issues: [{ path: 'params.name' }] });
    });
  });

  describe('idempotency keys', () => {
    it.each(['k', 'a.b-c_D9', 'x'.repeat(128)])('reads %j on tools/call and resources/read', (key) => {
      expect(parse(request('tools/call', { name: 't', ...withKey(key) }))).toMatchObject({ idempotencyKey: key });
      expect(parse(request('resources/read', { uri: 'ui://a', ...withKey(key) }))).toMatchObject({ idempotencyKey: key });
    });

    it('is null without one', () => {
      expect(parse(request('tools/call', { name: 't' }))).toMatchObject({ idempotencyKey: null });
      expect(parse(request('resources/read', { uri: 'ui://a', _meta: { other: 1 } }))).toMatchObject({ idempotencyKey: null });
    });

    it.each([[''], ['x'.repeat(129)], ['a b'], ['ключ'], ['a/b'], [42], [null], [{}]])(
      'refuses %j as IDEMPOTENCY_KEY_INVALID (-32602), answering the id',
      (key) => {
        for (const message of [request('tools/call', { name: 't', ...withKey(key) }, 11), request('resources/read', { uri: 'ui://a', ...withKey(key) }, 11)]) {
          expect(refusalOf(message)).toEqual({ code: 'INVALID_ARGUMENT', reason: 'IDEMPOTENCY_KEY_INVALID', jsonRpc: -32602, id: 11, notification: undefined });
        }
      },
    );

    it('ignores a key, even a malformed one, on every other method', () => {
      expect(parse(request('tools/list', withKey('')))).toMatchObject({ idempotencyKey: null });
      expect(parse(request('ping', withKey(42)))).toMatchObject({ idempotencyKey: null });
    });
  });

  describe('tool arguments', () => {
    const nested = (depth: number): Record<string, unknown> => (depth === 0 ? {} : { a: nested(depth - 1) });

    it.each([
      ['a lone surrogate', { s: '\ud800' }],
      ['an unsafe integer', { n: 2 ** 60 }],
      ['too deep a value', nested(40)],
    ])('refuses %s as ARGUMENTS_NOT_CANONICAL (-32602), answering the id', (_, args) => {
      expect(refusalOf(request('tools/call', { name: 't', arguments: args }, 'c'))).toEqual({
        code: 'INVALID_ARGUMENT',
        reason: 'ARGUMENTS_NOT_CANONICAL',
        jsonRpc: -32602,
        id: 'c',
        notification: undefined,
      });
    });

    it('admits canonical arguments and a call without any', () => {
      expect(parse(request('tools/call', { name: 't', arguments: { s: 'é', n: -1.5, list: [true, null] } }))).toMatchObject({
        params: { arguments: { s: 'é', n: -1.5 } },
      });
      expect(parse(request('tools/call', { name: 't' }))).toMatchObject({ kind: 'request' });
    });
  });
});
