/** The fields of a CallToolResult the model may see; everything else (structuredContent, _meta, extras) stays sealed. */
const MODEL_VISIBLE_KEYS = ['content', 'isError', 'resultType'] as const;

export type ModelProjection = Partial<Record<(typeof MODEL_VISIBLE_KEYS)[number], unknown>>;

/**
 * The model projection of a tool result: a new object with only `content`, `isError` and `resultType`, their
 * values kept exactly (deep-copied, so later changes to the input cannot leak in). The input is not mutated.
 * An allowlist rather than deleting `structuredContent` and `_meta`, so an unknown future field is never exposed.
 */
export function projectForModel(result: Record<string, unknown>): ModelProjection {
  const projection: ModelProjection = {};
  for (const key of MODEL_VISIBLE_KEYS) {
    if (Object.prototype.hasOwnProperty.call(result, key)) projection[key] = structuredClone(result[key]);
  }
  return projection;
}
