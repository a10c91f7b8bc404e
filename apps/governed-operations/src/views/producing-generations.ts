import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalize } from '@apphost/canonical-json';
import type { CoordinationStore } from '@apphost/coordination';
import { AppHostError, sessionKeySchema, type BoundToolHandle, type SessionKey } from '@apphost/contracts';
import { incarnationInKey, producersPrefixOf } from './view-keys';

/**
 * What produced one sealed UI result, recorded host-privately by the batch pipeline before its event is appended:
 * the exact connection generation (a View binds to it, never to a newer one), the tool as the catalog named it and as
 * the server declared it. Keyed by session, incarnation, function call and sealed record id: the event id does not
 * exist yet, and the record id (unique, named by the event's descriptor) lets a bootstrap find it through the
 * verified event.
 */
export const producingGenerationSchema = z.strictObject({
  v: z.literal(1),
  session: sessionKeySchema,
  incarnation: z.number().int().min(1),
  functionCallId: z.string(),
  recordId: z.string(),
  generation: z.strictObject({
    generationId: z.uuid(),
    fence: z.number().int().min(1),
    ownerInstanceId: z.string(),
    toolsetId: z.string(),
    bindingGeneration: z.number().int().min(1),
    connectionClass: z.enum(['app-safe', 'full']),
  }),
  /** The model-catalog name the call used. */
  tool: z.string(),
  nativeName: z.string(),
  /** The exact declaration the generation listed (MCP Apps `toolInfo.tool`; its `_meta.ui` and `annotations`). */
  declaration: z.record(z.string(), z.unknown()),
  /** The call's arguments: what a placeholder's refresh or re-run runs again when the sealed record is unreadable. */
  arguments: z.record(z.string(), z.unknown()),
  recordedAt: z.iso.datetime(),
});
export type ProducingGeneration = z.infer<typeof producingGenerationSchema>;

export interface ProducerLocator {
  session: SessionKey;
  incarnation: number;
  functionCallId: string;
  recordId: string;
}

/** The producing-generation records in the coordination store (`view-producer:…`, see `view-keys.ts`). */
export class ProducingGenerations {
  constructor(private readonly store: CoordinationStore) {}

  /** Records the producer of one sealed call; a record of the same call and sealed record is never replaced. */
  async record(at: ProducerLocator, handle: BoundToolHandle, call: { tool: string; arguments: Record<string, unknown> }, ttlMs: number): Promise<void> {
    const value: ProducingGeneration = {
      v: 1,
      ...at,
      generation: {
        generationId: handle.execution.generationId,
        fence: handle.execution.fence,
        ownerInstanceId: handle.execution.ownerInstanceId,
        toolsetId: handle.toolsetId,
        bindingGeneration: handle.execution.bindingGeneration,
        connectionClass: handle.connectionClass,
      },
      tool: call.tool,
      nativeName: handle.nativeName,
      declaration: handle.declaration,
      arguments: call.arguments,
      recordedAt: new Date().toISOString(),
    };
    const stored = await this.store.setIfAbsent(keyOf(at), JSON.stringify(producingGenerationSchema.parse(value)), ttlMs);
    if (!stored) throw new AppHostError('INTERNAL', 'a producing-generation record of this call and sealed record already exists');
  }

  async find(at: ProducerLocator): Promise<ProducingGeneration | null> {
    const raw = await this.store.get(keyOf(at));
    if (raw === null) return null;
    const parsed = producingGenerationSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  }

  /** Cascade purge: deletes the session's records of `incarnation` and below; returns how many. */
  async purge(session: SessionKey, incarnation: number): Promise<number> {
    const prefix = producersPrefixOf(session);
    let deleted = 0;
    for (const key of await this.store.keysWithPrefix(prefix)) {
      if (incarnationInKey(key, prefix) > incarnation) continue;
      const raw = await this.store.get(key);
      if (raw !== null && (await this.store.compareAndDelete(key, raw))) deleted++;
    }
    return deleted;
  }
}

function keyOf(at: ProducerLocator): string {
  const call = createHash('sha256')
    .update(canonicalize({ functionCallId: at.functionCallId, recordId: at.recordId }))
    .digest('hex');
  return `${producersPrefixOf(at.session)}${at.incarnation}:${call}`;
}
