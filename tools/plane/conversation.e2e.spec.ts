import type { PublicEvent } from '@apphost/contracts';
import { transcriptLine } from '@apphost/testing';
import {
  continuationSpec,
  conversationProfile,
  openView,
  pollJob,
  resultOf,
  responseOf,
  runtimeOf,
  sectionHeader,
  startConversationPlane,
  structuredOf,
  text,
  viewRpc,
  type ConversationPlane,
  type ViewRpc,
} from './conversation-harness';

/**
 * The continuation loop end to end, modelled on a production host's: the continuation fixture's View (driven through
 * `POST /v1/views/{id}/rpc`, as a real View would be) sees its background work reach a terminal state, updates the
 * model context and sends `ui/message`; a scripted runtime long-polls, claims, consumes as an invocation, reads the
 * model-context block and runs the model's turn (a tool batch as that invocation) that appends one transcript line.
 * Real gateway, lifecycle-store, governed-operations, binding-registry on a private NATS, real PostgreSQL and Redis.
 * Budget: ~30 s to boot and bind, ~20 s for the four rounds (2 busy cores).
 */
jest.setTimeout(120_000);

const ROUNDS = 4;
/** The runtime's long poll: bounded, answered as soon as the View's message is accepted. */
const WAIT_MS = 5_000;

describe('Conversation: the continuation loop', () => {
  let conv: ConversationPlane;
  let rpc: ViewRpc;
  let alice: string;

  beforeAll(async () => {
    conv = await startConversationPlane({
      apps: { loop: ['loop'] },
      profiles: { conv: conversationProfile() },
      toolsets: { loop: continuationSpec('conv') },
    });
    rpc = viewRpc(conv.http);
    alice = await conv.bearer('alice');
  }, 90_000);

  afterAll(async () => {
    await conv?.stop();
  });

  it('four bounded rounds: exactly one transcript line per round, duplicate consumes append nothing, the turns are mcp_app', async () => {
    const session = { appName: 'loop', sessionId: 'c-loop' };
    const runtime = runtimeOf(conv.http, alice, session);
    // The user's turn: the model calls the UI tool, the host page renders its View.
    const view = await openView(conv.http, alice, {
      ...session,
      tool: 'start-job',
      arguments: { label: 'round-1', steps: 3, stepMs: 40 },
      invocationId: 'inv-user',
    });
    expect(view.hostCapabilities).toMatchObject({ message: { text: {} }, updateModelContext: { text: {}, structuredContent: {} } });
    let jobId = view.toolResult.structuredContent.jobId as string;
    const transcript: string[] = [];
    const consumedIds: string[] = [];

    for (let round = 1; round <= ROUNDS; round++) {
      // The View sees its job reach a terminal state (round 3's job fails: a failure is terminal too).
      const status = await pollJob(rpc, view, jobId);
      const outcome = round === 3 ? 'failed' : 'succeeded';
      expect(status).toMatchObject({ jobId, state: outcome, progress: 3 });
      const summary = `job ${jobId} ${outcome} (round ${round})`;
      expect(resultOf(await rpc.updateContext(view, { content: [text(summary)], structuredContent: { round, jobId, state: outcome } }))).toEqual({});
      expect(resultOf(await rpc.sendMessage(view, `Round ${round}: the job ${outcome}. Continue.`))).toEqual({});

      // The runtime: the long poll answers with exactly the View's message.
      const listed = await runtime.messages({ state: 'ACCEPTED', waitMs: WAIT_MS });
      expect(listed).toHaveLength(1);
      const [message] = listed;
      expect(message).toMatchObject({
        state: 'ACCEPTED',
        role: 'user',
        content: [text(`Round ${round}: the job ${outcome}. Continue.`)],
        viewId: view.viewId,
        widgetId: view.widgetId,
        incarnation: view.incarnation,
        invocationId: null,
      });
      expect(consumedIds).not.toContain(message.messageId);
      const claim = await runtime.claim(message.messageId);
      expect(claim.claimToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const invocationId = `inv-round-${round}`;
      expect(await runtime.consume(message.messageId, claim.claimToken, invocationId)).toMatchObject({ state: 'CONSUMED', invocationId });
      consumedIds.push(message.messageId);

      // What the model sees on this turn: the View's latest context, once, labelled with its widget and View.
      const context = await runtime.modelContext();
      expect(context.registers).toEqual([{ widgetId: view.widgetId, viewId: view.viewId, commitSequence: expect.any(Number), bytes: expect.any(Number) }]);
      expect(context.evicted).toEqual([]);
      const block = context.block?.content[0].text ?? '';
      expect(context.block?.role).toBe('user');
      expect(block.split(sectionHeader(view))).toHaveLength(2);
      expect(block).toContain(summary);
      if (round > 1) expect(block).not.toContain(`(round ${round - 1})`);

      // The model's turn as that invocation: one tool call, one transcript line with the round's exact identity.
      const turn = { round, messageId: message.messageId, invocationId };
      const call = { functionCallId: `turn-${round}`, tool: 'record-turn', arguments: turn };
      const batch = await runtime.toolBatch(invocationId, [call]);
      transcript.push(transcriptLine(turn));
      expect(responseOf(batch, call.functionCallId).structuredContent).toMatchObject({ appended: transcriptLine(turn), transcript });

      // A runtime that lost the answers retries both: the consume answers the same, the turn is the same event.
      expect(await runtime.consume(message.messageId, claim.claimToken, invocationId)).toMatchObject({ state: 'CONSUMED', invocationId });
      expect((await runtime.toolBatch(invocationId, [call])).eventId).toBe(batch.eventId);
      expect(await runtime.messages({ state: 'ACCEPTED' })).toEqual([]);

      // The View starts the next round's work itself (the UI tool is app-visible too).
      if (round < ROUNDS) {
        const next = structuredOf(
          await rpc.call(view, 'start-job', { label: `round-${round + 1}`, steps: 3, stepMs: 40, outcome: round + 1 === 3 ? 'failed' : 'succeeded' }),
        );
        jobId = next.jobId as string;
      }
    }

    // Exactly one line per round, in order, and nothing else.
    expect(structuredOf(await rpc.call(view, 'read-transcript')).transcript).toEqual(transcript);
    expect(transcript).toHaveLength(ROUNDS);
    expect(await runtime.messages({ state: 'CONSUMED' })).toEqual(
      consumedIds.map((messageId, i) => expect.objectContaining({ messageId, state: 'CONSUMED', invocationId: `inv-round-${i + 1}` })),
    );

    // Provenance: each turn's tool batch event is the app's (`mcp_app`); the user's own turn stays `user`.
    const events = await runtime.events();
    const modelEvents = (invocationId: string) => events.filter((e: PublicEvent) => e.invocationId === invocationId && e.audience === null);
    for (let round = 1; round <= ROUNDS; round++) {
      const turnEvents = modelEvents(`inv-round-${round}`);
      expect(turnEvents).toHaveLength(1);
      expect(turnEvents[0]).toMatchObject({
        invocationOrigin: 'mcp_app',
        functionResponses: [expect.objectContaining({ id: `turn-${round}`, name: 'record-turn' })],
      });
    }
    expect(modelEvents('inv-user')).toEqual([expect.objectContaining({ invocationOrigin: 'user' })]);
  });

  it('the loop stops when the View stops: a torn-down View speaks no more, its accepted message is still the conversation’s', async () => {
    const session = { appName: 'loop', sessionId: 'c-stop' };
    const runtime = runtimeOf(conv.http, alice, session);
    const view = await openView(conv.http, alice, { ...session, tool: 'start-job', arguments: { steps: 1, stepMs: 10 } });
    await pollJob(rpc, view, view.toolResult.structuredContent.jobId as string);
    expect(resultOf(await rpc.updateContext(view, { content: [text('stop-sentinel context')] }))).toEqual({});
    expect(resultOf(await rpc.sendMessage(view, 'done'))).toEqual({});
    expect((await runtime.modelContext()).block?.content[0].text).toContain('stop-sentinel context');
    expect((await conv.http('DELETE', `/v1/views/${view.viewId}`, { bearer: alice })).status).toBe(204);

    const refused = await rpc.sendMessage(view, 'after teardown');
    expect(refused.status).toBe(200);
    expect(refused.body.error.data).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'VIEW_REVOKED' });
    const [message, ...more] = await runtime.messages({ state: 'ACCEPTED', waitMs: WAIT_MS });
    expect(more).toEqual([]);
    expect(message.content).toEqual([text('done')]);
    const claim = await runtime.claim(message.messageId);
    expect(await runtime.consume(message.messageId, claim.claimToken, 'inv-after-teardown')).toMatchObject({ state: 'CONSUMED' });
    // The torn-down View's register never reaches the model again.
    expect(await runtime.modelContext()).toEqual({ block: null, registers: [], evicted: [] });
  });
});
