import { AppHostError } from '@apphost/contracts';
import { messageContentOf } from './message-content';

const TEXT = { text: {} };

function refusalOf(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (!(error instanceof AppHostError)) throw error;
    return { code: error.code, ...error.details };
  }
  throw new Error('expected a refusal');
}

describe('messageContentOf', () => {
  it('keeps the text of each block, in order, without annotations or _meta', () => {
    const blocks = [
      { type: 'text', text: 'first', annotations: { priority: 1 } },
      { type: 'text', text: 'second', _meta: { k: 1 } },
    ];
    expect(messageContentOf(blocks, TEXT, 100)).toEqual([
      { type: 'text', text: 'first' },
      { type: 'text', text: 'second' },
    ]);
  });

  it('refuses a modality that is not text, and text when it is not advertised', () => {
    expect(refusalOf(() => messageContentOf([{ type: 'image', data: 'aGk=', mimeType: 'image/png' }], { text: {}, image: {} }, 100))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'MODALITY_NOT_ADVERTISED',
      modality: 'image',
    });
    expect(refusalOf(() => messageContentOf([{ type: 'text', text: 'x' }], undefined, 100))).toMatchObject({
      reason: 'MODALITY_NOT_ADVERTISED',
      modality: 'text',
      advertised: [],
    });
    expect(refusalOf(() => messageContentOf([{ type: 'text', text: 'x' }], { image: {} }, 100))).toMatchObject({ advertised: ['image'] });
  });

  it('counts UTF-8 bytes over all blocks: exactly the limit is admitted, one byte more is MESSAGE_TOO_LARGE', () => {
    const blocks = [
      { type: 'text', text: 'é'.repeat(2) },
      { type: 'text', text: 'x' },
    ]; // 5 bytes
    expect(messageContentOf(blocks, TEXT, 5)).toHaveLength(2);
    expect(refusalOf(() => messageContentOf(blocks, TEXT, 4))).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      reason: 'MESSAGE_TOO_LARGE',
      bytes: 5,
      limit: 4,
      blocks: 2,
      maxBlocks: 32,
    });
  });

  it('holds at most 32 blocks, and at least one', () => {
    const block = { type: 'text', text: '' };
    expect(
      messageContentOf(
        Array.from({ length: 32 }, () => block),
        TEXT,
        10,
      ),
    ).toHaveLength(32);
    expect(
      refusalOf(() =>
        messageContentOf(
          Array.from({ length: 33 }, () => block),
          TEXT,
          10,
        ),
      ),
    ).toMatchObject({ reason: 'MESSAGE_TOO_LARGE', blocks: 33 });
    expect(refusalOf(() => messageContentOf([], TEXT, 10))).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'RPC_INVALID_PARAMS' });
  });
});
