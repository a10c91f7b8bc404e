import { eventually } from '@apphost/testing';
import { startCrashPlane, type CrashPlane } from './conversation-crash-harness';
import { continuationSpec, conversationProfile, openView, resultOf, runtimeOf, text, viewRpc, type ViewRpc } from './conversation-harness';

/**
 * governed-operations SIGKILLed in the middle of a `ui/message`, at the two fault points between the durable record
 * and the View's `{}`: after the record (not yet accepted) the message is never delivered — it expires — and after
 * the acceptance it exists and belongs to the conversation (claimable, consumable once). Either way the View only
 * learns that the outcome is unknown; it may send a new message (no replay key in v1).
 * Budget: ~40 s to boot and bind, two restarts of governed-operations (~10 s each), ~20 s of waiting.
 */
jest.setTimeout(180_000);

/** governed-operations' fault points around `ui/message` (`governed.faults.ts`). */
const AFTER_RECORD = 'message.after-record';
const AFTER_ACCEPT = 'message.after-accept';
/** The request deadline of the View's uncertain `ui/message` (the gateway answers when it runs out). */
const DEADLINE_MS = 4_000;
/** How long a recorded, never accepted message waits before it expires (the governed config knob set below). */
const ACCEPT_WITHIN_MS = 2_000;

describe('Conversation: a governed-operations crash between record and response', () => {
  let conv: CrashPlane;
  let rpc: ViewRpc;
  let alice: string;

  beforeAll(async () => {
    conv = await startCrashPlane({
      apps: { crash: ['crash'] },
      profiles: { conv: conversationProfile() },
      toolsets: { crash: continuationSpec('conv') },
      governedEnv: { GOVERNED_MESSAGE_ACCEPT_WITHIN_MS: String(ACCEPT_WITHIN_MS) },
    });
    rpc = viewRpc(conv.http);
    alice = await conv.bearer('alice');
  }, 120_000);

  afterAll(async () => {
    await conv?.stop();
  });

  /** Sends `words` while governed-operations is armed at `point`, kills it there, and restarts it unarmed. */
  const crashAt = async (point: string, sessionId: string, words: string) => {
    await conv.governed.restart(point);
    const session = { appName: 'crash', sessionId };
    const view = await openView(conv.http, alice, { ...session, tool: 'start-job' });
    const pending = rpc.sendMessage(view, words, { timeoutMs: DEADLINE_MS });
    // Answered before the point was reached: the fault point is not on this path (fail with the answer).
    const early = pending.then((reply) => Promise.reject(new Error(`answered before ${point}: ${reply.status} ${reply.text.slice(0, 300)}`)));
    await Promise.race([conv.governed.reached(point), early]);
    await conv.governed.kill();
    const uncertain = await pending;
    await conv.governed.restart();
    return { view, runtime: runtimeOf(conv.http, alice, session), uncertain };
  };

  it('killed after the record, before acceptance: never delivered, the record expires; the View’s new message is the one delivered', async () => {
    const { view, runtime, uncertain } = await crashAt(AFTER_RECORD, 'x-record', 'recorded, never accepted');
    // The View cannot know: the gateway's deadline ran out, with no JSON-RPC answer.
    expect(uncertain.status).toBe(504);
    expect(uncertain.body.error).toMatchObject({ code: 'OUTCOME_UNKNOWN', retryable: false });
    expect(await runtime.messages({ state: 'ACCEPTED' })).toEqual([]);
    const expired = await eventually(
      async () => {
        const found = await runtime.messages({ state: 'EXPIRED' });
        return found.length > 0 ? found : undefined;
      },
      ACCEPT_WITHIN_MS + 10_000,
      200,
    );
    expect(expired).toEqual([expect.objectContaining({ viewId: view.viewId, content: [text('recorded, never accepted')], invocationId: null })]);

    // The View, uncertain, sends a new message: that one is the conversation's, once.
    expect(resultOf(await rpc.sendMessage(view, 'sent again'))).toEqual({});
    const accepted = await runtime.messages({ state: 'ACCEPTED' });
    expect(accepted).toEqual([expect.objectContaining({ viewId: view.viewId, content: [text('sent again')] })]);
    expect(accepted[0].messageId).not.toBe(expired[0].messageId);
  });

  it('killed after acceptance, before the response: the message exists and is claimed and consumed once', async () => {
    const { view, runtime, uncertain } = await crashAt(AFTER_ACCEPT, 'x-accept', 'accepted, answer lost');
    expect(uncertain.status).toBe(504);
    expect(uncertain.body.error).toMatchObject({ code: 'OUTCOME_UNKNOWN', retryable: false });
    const [message, ...more] = await runtime.messages({ state: 'ACCEPTED', waitMs: 5_000 });
    expect(more).toEqual([]);
    expect(message).toMatchObject({ viewId: view.viewId, widgetId: view.widgetId, content: [text('accepted, answer lost')] });
    // It survives the restart and is delivered exactly once.
    const claim = await runtime.claim(message.messageId);
    expect(await runtime.consume(message.messageId, claim.claimToken, 'inv-after-crash')).toMatchObject({ state: 'CONSUMED', invocationId: 'inv-after-crash' });
    expect(await runtime.consume(message.messageId, claim.claimToken, 'inv-after-crash')).toMatchObject({ state: 'CONSUMED' });
    const again = await runtime.claimReply(message.messageId);
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ details: { reason: 'MESSAGE_NOT_CLAIMABLE' } });
    expect(await runtime.messages({ state: 'ACCEPTED' })).toEqual([]);
  });
});
