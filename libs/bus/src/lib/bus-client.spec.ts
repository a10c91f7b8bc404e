import { AppHostError } from '@apphost/contracts';
import { BusClient } from './bus-client';
import { encodeJson } from './codec';
import type { BusTransport } from './transports/transport';
import { echoContract } from '../test/transports';

/** A transport that answers every request with fixed bytes: replies are never trusted without validation. */
function replyingWith(value: unknown): BusTransport {
  return {
    kind: 'in-process',
    maxPayloadBytes: 1024 * 1024,
    subjectPrefix: '',
    request: async () => ({ data: typeof value === 'string' ? new TextEncoder().encode(value) : encodeJson(value), headers: {} }),
    subscribe: () => ({ drain: async () => undefined }),
    isConnected: () => true,
    close: async () => undefined,
  };
}

describe('BusClient reply handling', () => {
  const contract = echoContract();

  it.each([
    ['not JSON', '{"ok":tru'],
    ['a success without data', { ok: true }],
    ['an error with an unknown code', { ok: false, error: { code: 'NOPE', message: 'x', retryable: false } }],
    ['neither success nor error', { hello: 'world' }],
    ['data that breaks the response contract', { ok: true, data: { text: 42 } }],
  ])('treats %s as INTERNAL', async (_label, reply) => {
    const client = new BusClient({ transport: replyingWith(reply), defaultTimeoutMs: 1000 });
    const error = await client.request(contract, { text: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppHostError);
    expect((error as AppHostError).code).toBe('INTERNAL');
  });

  it('rethrows a well-formed error envelope unchanged', async () => {
    const client = new BusClient({
      transport: replyingWith({ ok: false, error: { code: 'NOT_FOUND', message: 'no such record', retryable: false } }),
      defaultTimeoutMs: 1000,
    });
    await expect(client.request(contract, { text: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'no such record' });
  });

  it('refuses a non-object payload and a non-positive timeout before sending', async () => {
    const client = new BusClient({ transport: replyingWith({ ok: true, data: { text: 'x' } }), defaultTimeoutMs: 1000 });
    await expect(client.send(contract.subject, 'text')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(client.request(contract, { text: 'x' }, { timeoutMs: 0 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
