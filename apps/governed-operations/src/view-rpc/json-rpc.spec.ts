import { AppHostError, GovernedReasons, JSON_RPC_CODE_BY_ERROR } from '@apphost/contracts';
import { idOfRejected, jsonRpcError, jsonRpcResult } from './json-rpc';

describe('View RPC JSON-RPC responses', () => {
  it('an AppHostError: the table’s code, data.code / reason / retryable and the other details, never details.id', () => {
    const error = new AppHostError('FAILED_PRECONDITION', 'the view is no longer live (TORN_DOWN)', {
      details: GovernedReasons.details('VIEW_REVOKED', { revocation: 'TORN_DOWN', id: 4 }),
    });
    expect(jsonRpcError(4, error)).toEqual({
      jsonrpc: '2.0',
      id: 4,
      error: {
        code: JSON_RPC_CODE_BY_ERROR.FAILED_PRECONDITION,
        message: 'the view is no longer live (TORN_DOWN)',
        data: { code: 'FAILED_PRECONDITION', reason: 'VIEW_REVOKED', retryable: false, revocation: 'TORN_DOWN' },
      },
    });
  });

  it('protocol reasons answer the protocol’s codes', () => {
    const of = (reason: Parameters<typeof GovernedReasons.details>[0], code: 'INVALID_ARGUMENT' | 'NOT_FOUND') =>
      jsonRpcError(1, new AppHostError(code, reason, { details: GovernedReasons.details(reason) }));
    expect(of('RPC_INVALID_REQUEST', 'INVALID_ARGUMENT')).toMatchObject({ error: { code: -32600 } });
    expect(of('RPC_METHOD_NOT_FOUND', 'NOT_FOUND')).toMatchObject({ error: { code: -32601, data: { code: 'NOT_FOUND' } } });
    expect(of('TOOL_ARGUMENTS_INVALID', 'INVALID_ARGUMENT')).toMatchObject({ error: { code: -32602 } });
  });

  it('anything else is INTERNAL (-32603) and says nothing of its cause; an error without reason has reason null', () => {
    expect(jsonRpcError('a', new Error('secret stack detail'))).toEqual({
      jsonrpc: '2.0',
      id: 'a',
      error: { code: -32603, message: 'the operation failed inside AppHost', data: { code: 'INTERNAL', reason: null, retryable: false } },
    });
    expect(jsonRpcError(null, new AppHostError('UNAVAILABLE', 'down'))).toMatchObject({
      id: null,
      error: { code: -32007, data: { reason: null, retryable: true } },
    });
  });

  it('an admission error answers the id it could read, else null; a result is the id and the result', () => {
    expect(idOfRejected(new AppHostError('NOT_FOUND', 'x', { details: { reason: 'RPC_METHOD_NOT_FOUND', id: 'q' } }))).toBe('q');
    expect(idOfRejected(new AppHostError('INVALID_ARGUMENT', 'x', { details: { id: { nested: true } } }))).toBeNull();
    expect(idOfRejected(new Error('x'))).toBeNull();
    expect(jsonRpcResult(3, {})).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
  });
});
