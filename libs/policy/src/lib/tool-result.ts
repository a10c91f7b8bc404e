import { z } from 'zod';
import { AppHostError, describeIssues } from '@apphost/contracts';

const annotations = z.object({}).passthrough().optional();
const meta = z.record(z.string(), z.unknown()).optional();
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');
const mimeType = z.string().min(1).max(255);

/** MCP content blocks (2025-11-25 / 2026-07-28 cores); unknown block types are invalid. */
const contentBlockSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string(), annotations, _meta: meta }),
  z.object({ type: z.literal('image'), data: base64, mimeType, annotations, _meta: meta }),
  z.object({ type: z.literal('audio'), data: base64, mimeType, annotations, _meta: meta }),
  z
    .object({ type: z.literal('resource_link'), uri: z.string().min(1), name: z.string(), mimeType: mimeType.optional(), annotations, _meta: meta })
    .passthrough(),
  z.object({
    type: z.literal('resource'),
    resource: z.union([
      z.object({ uri: z.string().min(1), mimeType: mimeType.optional(), text: z.string(), _meta: meta }),
      z.object({ uri: z.string().min(1), mimeType: mimeType.optional(), blob: base64, _meta: meta }),
    ]),
    annotations,
    _meta: meta,
  }),
]);

const toolResultSchema = z
  .object({
    content: z.array(contentBlockSchema).min(1, 'content must not be empty'),
    isError: z.boolean().optional(),
    // Only a terminal result may be sealed or shown; `input_required` is an MRTR intermediate.
    resultType: z.literal('complete').optional(),
    structuredContent: z.record(z.string(), z.unknown()).optional(),
    _meta: meta,
  })
  // Unknown top-level fields survive validation: the sealed record keeps the whole merged result.
  .loose()
  .refine((r) => r.content.some((block) => block.type !== 'text' || block.text.trim() !== ''), {
    message: 'content has no meaningful block',
    path: ['content'],
  });

export type ValidToolResult = z.infer<typeof toolResultSchema>;

/** Validates a merged CallToolResult before it is sealed or projected; any violation is INVALID_ARGUMENT with its paths. */
export function validateToolResult(result: unknown): ValidToolResult {
  const parsed = toolResultSchema.safeParse(result);
  if (parsed.success) return parsed.data;
  throw new AppHostError('INVALID_ARGUMENT', 'tool result is not a valid terminal CallToolResult', { details: { issues: describeIssues(parsed.error) } });
}
