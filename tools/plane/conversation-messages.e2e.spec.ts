import { sleep } from '@apphost/testing';
import {
  continuationSpec,
  conversationProfile,
  openView,
  openViewOf,
  resultOf,
  rpcErrorOf,
  runtimeOf,
  startConversationPlane,
  teardown,
  text,
  viewRpc,
  type ConversationPlane,
  type LiveView,
  type Runtime,
  type ViewRpc,
} from './conversation-harness';
import { sessionWithUiCall } from './views-harness';

/**
 * Pending `ui/message`s end to end: the View's message is durable and ACCEPTED before its `{}`; the runtime's claim
 * is fenced (one claimer wins, the other 409 `MESSAGE_CLAIMED`), expires and is re-claimable; consume is exactly
 * once; a torn-down View's message is never accepted (an accepted one still belongs to the conversation); a JSON-RPC
 * id reused after completion is a new message; the confirm policy needs the user's attestation; role, modality,
 * size and rate refusals record nothing; a rebind rejects at claim; a deleted session takes its messages with it.
 * Budget: ~30 s to boot and bind, ~40 s of tests (2 busy cores).
 */
jest.setTimeout(150_000);

const WAIT_MS = 5_000;

describe('Conversation: pending messages', () => {
  let conv: ConversationPlane;
  let rpc: ViewRpc;
  let alice: string;
  let admin: string;

  beforeAll(async () => {
    conv = await startConversationPlane({
      apps: { msg: ['msg'], confirm: ['confirm'], reb: ['reb'] },
      profiles: {
        conv: conversationProfile(),
        confirming: conversationProfile({ callbackPolicy: { sampling: 'deny', elicitation: 'deny', roots: 'deny', message: 'confirm' } }),
      },
      toolsets: { msg: continuationSpec('conv'), confirm: continuationSpec('confirming'), reb: continuationSpec('conv') },
    });
    rpc = viewRpc(conv.http);
    alice = await conv.bearer('alice');
    admin = await conv.bearer('root', { admin: true });
  }, 90_000);

  afterAll(async () => {
    await conv?.stop();
  });

  /** A fresh session with one live View of `start-job`, and its runtime. */
  const viewIn = async (appName: string, sessionId: string): Promise<{ view: LiveView; runtime: Runtime }> => ({
    view: await openView(conv.http, alice, { appName, sessionId, tool: 'start-job' }),
    runtime: runtimeOf(conv.http, alice, { appName, sessionId }),
  });
  /** The View sends `words` and gets `{}`; the runtime's long poll finds it ACCEPTED. */
  const accepted = async (view: LiveView, runtime: Runtime, words: string) => {
    expect(resultOf(await rpc.sendMessage(view, words))).toEqual({});
    const found = (await runtime.messages({ state: 'ACCEPTED', waitMs: WAIT_MS })).find((m) => m.content[0]?.text === words);
    if (!found) throw new Error(`message ${words} not listed ACCEPTED`);
    return found;
  };

  it('the message is ACCEPTED with its exact identity before the View gets {}; the long poll answers at once, or empty when waitMs runs out', async () => {
    const { view, runtime } = await viewIn('msg', 'm-identity');
    const quiet = performance.now();
    expect(await runtime.messages({ state: 'ACCEPTED', waitMs: 800 })).toEqual([]);
    expect(performance.now() - quiet).toBeGreaterThanOrEqual(700);

    // A poll already waiting is answered by the acceptance, well before its waitMs.
    const polling = performance.now();
    const poll = runtime.messages({ state: 'ACCEPTED', waitMs: 20_000 });
    await sleep(300);
    expect(resultOf(await rpc.sendMessage(view, 'hello from the View'))).toEqual({});
    const [message, ...more] = await poll;
    expect(performance.now() - polling).toBeLessThan(10_000);
    expect(more).toEqual([]);
    expect(message).toMatchObject({
      messageId: expect.stringMatching(/^msg-[0-9a-f]{32}$/),
      state: 'ACCEPTED',
      role: 'user',
      content: [text('hello from the View')],
      viewId: view.viewId,
      widgetId: view.widgetId,
      nonce: expect.stringMatching(/^[0-9a-f]{32}$/),
      rejection: null,
      claimExpiresAt: null,
      invocationId: null,
    });
    expect(JSON.stringify(message)).not.toContain(view.grant);
    // The binding and the opener the claim re-checks stay inside the store.
    expect(Object.keys(message).sort()).toEqual([
      'claimExpiresAt',
      'content',
      'createdAt',
      'incarnation',
      'invocationId',
      'messageId',
      'nonce',
      'rejection',
      'role',
      'state',
      'updatedAt',
      'viewId',
      'widgetId',
    ]);
  });

  it('two claimers: one wins, the other gets 409 MESSAGE_CLAIMED; consume is exactly once', async () => {
    const { view, runtime } = await viewIn('msg', 'm-claim');
    const message = await accepted(view, runtime, 'claim me');
    const replies = await Promise.all([runtime.claimReply(message.messageId), runtime.claimReply(message.messageId)]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
    const [won, lost] = replies[0].status === 200 ? replies : [replies[1], replies[0]];
    expect(lost.body.error).toMatchObject({ code: 'CONFLICT', details: { reason: 'MESSAGE_CLAIMED' } });
    expect(lost.text).not.toContain(won.body.claimToken);
    const token = won.body.claimToken as string;
    expect(won.body.message).toMatchObject({ messageId: message.messageId, state: 'CLAIMED', claimExpiresAt: won.body.claimExpiresAt });
    expect(await runtime.messages({ state: 'ACCEPTED' })).toEqual([]);
    expect(JSON.stringify(await runtime.messages({ state: 'CLAIMED' }))).not.toContain(token);

    // A foreign token is refused; the holder consumes once; the same token and invocation again answers the same.
    const foreign = await runtime.consumeReply(message.messageId, 'A'.repeat(43), 'inv-claim');
    expect(foreign.status).toBe(409);
    expect(foreign.body.error).toMatchObject({ code: 'CONFLICT', details: { reason: 'MESSAGE_CLAIM_INVALID' } });
    const consumed = await runtime.consume(message.messageId, token, 'inv-claim');
    expect(consumed).toMatchObject({ state: 'CONSUMED', invocationId: 'inv-claim' });
    expect(await runtime.consume(message.messageId, token, 'inv-claim')).toEqual(consumed);
    // Another invocation with the same token, or a claim on a consumed message, is refused.
    const other = await runtime.consumeReply(message.messageId, token, 'inv-other');
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ details: { reason: 'MESSAGE_CLAIM_INVALID' } });
    const reclaim = await runtime.claimReply(message.messageId);
    expect(reclaim.status).toBe(400);
    expect(reclaim.body.error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'MESSAGE_NOT_CLAIMABLE' } });
    expect(await runtime.messages({ state: 'CONSUMED' })).toEqual([expect.objectContaining({ messageId: message.messageId, invocationId: 'inv-claim' })]);
  });

  it('an expired claim reads ACCEPTED again and is re-claimable; the old token is dead', async () => {
    const { view, runtime } = await viewIn('msg', 'm-expiry');
    const message = await accepted(view, runtime, 'expire my claim');
    const first = await runtime.claim(message.messageId, 1_000);
    expect((await runtime.claimReply(message.messageId)).status).toBe(409);
    await sleep(1_300);
    expect(await runtime.messages({ state: 'ACCEPTED' })).toEqual([expect.objectContaining({ messageId: message.messageId })]);
    const second = await runtime.claim(message.messageId);
    expect(second.claimToken).not.toBe(first.claimToken);
    const stale = await runtime.consumeReply(message.messageId, first.claimToken, 'inv-expiry');
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ details: { reason: 'MESSAGE_CLAIM_INVALID' } });
    expect(await runtime.consume(message.messageId, second.claimToken, 'inv-expiry')).toMatchObject({ state: 'CONSUMED', invocationId: 'inv-expiry' });
  });

  it('one content block sent without its array (a form Views send) is the same message as the array form', async () => {
    const { view, runtime } = await viewIn('msg', 'm-one-block');
    expect(resultOf(await rpc.request(view, 'ui/message', { role: 'user', content: text('a single block') }))).toEqual({});
    expect(await runtime.messages({ state: 'ACCEPTED', waitMs: WAIT_MS })).toEqual([expect.objectContaining({ content: [text('a single block')] })]);
  });

  it('a JSON-RPC id reused after completion is a new message (no replay key)', async () => {
    const { view, runtime } = await viewIn('msg', 'm-reuse');
    expect(resultOf(await rpc.sendMessage(view, 'same words', { id: 'same-id' }))).toEqual({});
    expect(resultOf(await rpc.sendMessage(view, 'same words', { id: 'same-id' }))).toEqual({});
    const listed = await runtime.messages({ state: 'ACCEPTED' });
    expect(listed).toHaveLength(2);
    expect(new Set(listed.map((m) => m.messageId)).size).toBe(2);
    expect(new Set(listed.map((m) => m.nonce)).size).toBe(2);
  });

  it('a torn-down View’s message is never accepted, whichever comes first; an accepted one outlives its View', async () => {
    const session = { appName: 'msg', sessionId: 'm-teardown' };
    const runtime = runtimeOf(conv.http, alice, session);
    const ev = await sessionWithUiCall(conv.http, alice, { ...session, tool: 'start-job' });
    // Torn down first: refused, nothing listed in any state.
    const gone = await openViewOf(conv.http, alice, session, ev);
    await teardown(conv.http, gone);
    expect(rpcErrorOf(await rpc.sendMessage(gone, 'too late')).data).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'VIEW_REVOKED' });
    expect(await runtime.messages()).toEqual([]);

    // Racing: a message whose View got `{}` is ACCEPTED; any other never is.
    const answered: string[] = [];
    for (let i = 0; i < 6; i++) {
      const view = await openViewOf(conv.http, alice, session, ev);
      const [reply] = await Promise.all([rpc.sendMessage(view, `race ${i}`), teardown(conv.http, view)]);
      if (reply.body.error) expect(reply.body.error.data).toMatchObject({ reason: 'VIEW_REVOKED' });
      else answered.push(`race ${i}`);
    }
    const all = await runtime.messages();
    expect(all.filter((m) => m.state === 'ACCEPTED').map((m) => m.content[0].text)).toEqual(answered);
    expect(all.filter((m) => m.state !== 'ACCEPTED').every((m) => m.state === 'REJECTED' && m.rejection === 'VIEW_TORN_DOWN')).toBe(true);

    // An accepted message is the conversation's: its View's teardown does not stop the claim.
    const view = await openViewOf(conv.http, alice, session, ev);
    const kept = await accepted(view, runtime, 'kept after teardown');
    await teardown(conv.http, view);
    const claim = await runtime.claim(kept.messageId);
    expect(await runtime.consume(kept.messageId, claim.claimToken, 'inv-kept')).toMatchObject({ state: 'CONSUMED' });
  });

  it('confirm policy: without the user’s attestation the message is refused and nothing is recorded; with it, accepted', async () => {
    const { view, runtime } = await viewIn('confirm', 'm-confirm');
    expect(view.hostCapabilities).toMatchObject({ message: { text: {} } });
    const refused = rpcErrorOf(await rpc.sendMessage(view, 'unconfirmed'));
    expect(refused.data).toMatchObject({ code: 'PERMISSION_DENIED', reason: 'MESSAGE_CONFIRMATION_REQUIRED' });
    expect(await runtime.messages()).toEqual([]);
    expect(resultOf(await rpc.sendMessage(view, 'confirmed by the user', { attested: 'message' }))).toEqual({});
    expect(await runtime.messages({ state: 'ACCEPTED', waitMs: WAIT_MS })).toEqual([expect.objectContaining({ content: [text('confirmed by the user')] })]);
  });

  it('role, modality and size refusals record nothing', async () => {
    const { view, runtime } = await viewIn('msg', 'm-refusals');
    const assistant = await rpc.request(view, 'ui/message', { role: 'assistant', content: [text('not mine to say')] });
    expect(rpcErrorOf(assistant).data.code).toBe('INVALID_ARGUMENT');
    const image = await rpc.request(view, 'ui/message', { role: 'user', content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] });
    expect(rpcErrorOf(image).data).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'MODALITY_NOT_ADVERTISED' });
    const huge = await rpc.sendMessage(view, 'x'.repeat(200 * 1024));
    expect(rpcErrorOf(huge).data).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', reason: 'MESSAGE_TOO_LARGE' });
    expect(await runtime.messages()).toEqual([]);
  });

  it('a View’s message rate is bounded (GOVERNED_MESSAGE_PER_VIEW_PER_MINUTE, 6 by default): the next one is refused and recorded nowhere', async () => {
    const { view, runtime } = await viewIn('msg', 'm-rate');
    for (let i = 1; i <= 6; i++) expect(resultOf(await rpc.sendMessage(view, `message ${i}`))).toEqual({});
    const refused = rpcErrorOf(await rpc.sendMessage(view, 'one too many'));
    expect(refused.data).toMatchObject({ code: 'RESOURCE_EXHAUSTED', reason: 'RPC_RATE_LIMITED', scope: 'message', limit: 6, retryable: true });
    const listed = await runtime.messages();
    expect(listed.map((m) => m.content[0].text)).toEqual([1, 2, 3, 4, 5, 6].map((i) => `message ${i}`));
  });

  it('a rebind after acceptance rejects the message at claim (REJECTED, TOOLSET_REBOUND)', async () => {
    const { view, runtime } = await viewIn('reb', 'm-rebind');
    const message = await accepted(view, runtime, 'bound before the rebind');
    expect((await conv.http('POST', '/v1/toolsets/reb:rebind', { bearer: admin })).status).toBe(200);
    const refused = await runtime.claimReply(message.messageId);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { reason: 'MESSAGE_REJECTED', rejection: 'TOOLSET_REBOUND' } });
    expect(await runtime.messages({ state: 'REJECTED' })).toEqual([expect.objectContaining({ messageId: message.messageId, rejection: 'TOOLSET_REBOUND' })]);
  });

  it('deleting the session removes its pending messages; the next incarnation starts empty', async () => {
    const { view, runtime } = await viewIn('msg', 'm-delete');
    const message = await accepted(view, runtime, 'before the delete');
    expect((await runtime.deleteSession()).status).toBe(200);
    expect((await runtime.claimReply(message.messageId)).status).toBe(404);
    expect((await runtime.listReply({ state: 'ACCEPTED' })).status).toBe(404);
    expect((await conv.http('POST', '/v1/sessions', { bearer: alice, body: { appName: 'msg', sessionId: 'm-delete' } })).status).toBe(201);
    expect(await runtime.messages()).toEqual([]);
    expect((await runtime.claimReply(message.messageId)).status).toBe(404);
  });
});
