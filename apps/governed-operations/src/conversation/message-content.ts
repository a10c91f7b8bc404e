import { AppHostError, GovernedReasons, type OfferedHostCapabilities, type PendingMessage } from '@apphost/contracts';

/** The text of a message as the lifecycle-store keeps it: `{ type: "text", text }` blocks, nothing else. */
export type MessageContent = PendingMessage['content'];

/** The most blocks one message may carry (as `messageContentSchema`, the pending-message record, bounds it). */
const MAX_BLOCKS = 32;

/**
 * The content of an admitted `ui/message` (blocks as the published schema read them), held to what the host
 * advertised and its size limit: every block text (the only modality stored), `text` offered under `message`, at most
 * `maxBytes` of UTF-8 text in all and `MAX_BLOCKS` blocks. Annotations and `_meta` of a block are not kept.
 */
export function messageContentOf(blocks: readonly Record<string, unknown>[], offered: OfferedHostCapabilities['message'], maxBytes: number): MessageContent {
  if (blocks.length === 0)
    throw new AppHostError('INVALID_ARGUMENT', 'a ui/message needs at least one content block', { details: GovernedReasons.details('RPC_INVALID_PARAMS') });
  const textOffered = offered !== undefined && 'text' in offered;
  const content: MessageContent = [];
  for (const block of blocks) {
    const type = typeof block['type'] === 'string' ? block['type'].slice(0, 64) : 'unknown';
    if (type !== 'text' || !textOffered || typeof block['text'] !== 'string')
      throw new AppHostError('INVALID_ARGUMENT', `content of type ${JSON.stringify(type)} is not an advertised message modality`, {
        details: GovernedReasons.details('MODALITY_NOT_ADVERTISED', { modality: type, advertised: Object.keys(offered ?? {}) }),
      });
    content.push({ type: 'text', text: block['text'] });
  }
  const bytes = content.reduce((sum, block) => sum + Buffer.byteLength(block.text, 'utf8'), 0);
  if (bytes > maxBytes || content.length > MAX_BLOCKS)
    throw new AppHostError(
      'PAYLOAD_TOO_LARGE',
      `the message is ${bytes} bytes in ${content.length} blocks: at most ${maxBytes} bytes in ${MAX_BLOCKS} blocks`,
      {
        details: GovernedReasons.details('MESSAGE_TOO_LARGE', { bytes, limit: maxBytes, blocks: content.length, maxBlocks: MAX_BLOCKS }),
      },
    );
  return content;
}
