import {
  AppHostError,
  isWidgetDescriptor,
  LifecycleReasons,
  type AppendProvenance,
  type LedgerEventInput,
  type LifecycleReason,
  type PublicEvent,
} from '@apphost/contracts';

/** The protected fields, stamped by the finalizer only. Also stripped from `customMetadata` under these names. */
export const PROTECTED_FIELDS = ['audience', 'invocationOrigin', 'emitter', 'immediateCaller'] as const;
const PROTECTED_METADATA_KEYS = new Set<string>([...PROTECTED_FIELDS, 'invocation_origin', 'immediate_caller']);

export interface Stamp {
  audience: 'app_audit' | null;
  invocationOrigin: 'user' | 'mcp_app' | 'system';
  emitter: 'runner' | 'host' | 'system' | 'session-api';
  immediateCaller: 'model' | 'app' | 'host' | null;
}

/** A finalized event body: caller content minus forged fields, plus the stamp. JSON-only (no undefined values). */
export type FinalizedEvent = Record<string, unknown> & Stamp & { author: string };

/**
 * The RFC provenance table as code. `immediateCaller` is derived: on turn paths it is `model` only for tool events
 * (function calls or responses), nested under the model; direct app operations are `app`; bootstrap render is `host`.
 */
export function stampFor(provenance: AppendProvenance, event: LedgerEventInput): Stamp {
  const toolEvent = (event.functionCalls?.length ?? 0) > 0 || (event.functionResponses?.length ?? 0) > 0;
  switch (provenance.path) {
    case 'user-turn':
      return { audience: null, invocationOrigin: 'user', emitter: 'runner', immediateCaller: toolEvent ? 'model' : null };
    case 'ui-message':
      return { audience: null, invocationOrigin: 'mcp_app', emitter: 'runner', immediateCaller: toolEvent ? 'model' : null };
    case 'app-operation':
      return { audience: 'app_audit', invocationOrigin: 'mcp_app', emitter: 'host', immediateCaller: 'app' };
    case 'bootstrap-render':
      return { audience: 'app_audit', invocationOrigin: 'mcp_app', emitter: 'host', immediateCaller: 'host' };
    case 'system':
      return { audience: null, invocationOrigin: 'system', emitter: 'system', immediateCaller: null };
    case 'reconciliation':
      return {
        audience: provenance.ingress === 'mcp_app' ? 'app_audit' : null,
        invocationOrigin: provenance.ingress,
        emitter: 'system',
        immediateCaller: null,
      };
    case 'session-api':
      return { audience: null, invocationOrigin: 'system', emitter: 'session-api', immediateCaller: null };
  }
}

const invalid = (reason: LifecycleReason, message: string, details: Record<string, unknown> = {}) =>
  new AppHostError('INVALID_ARGUMENT', message, { details: LifecycleReasons.details(reason, details) });

/**
 * Cross-validates descriptors and references over one append (or one import): every `sealedResultRef` (widget-level
 * or in the event-level `sealedResultRefs` map) must name a function-response id of its own event; a record id may be
 * referenced once; one function call carries at most one reference; function-call ids and function-response ids are
 * unique across the batch. Throws INVALID_ARGUMENT with `details.reason`.
 */
export function crossValidate(events: LedgerEventInput[]): void {
  const callIds = new Set<string>();
  const responseIds = new Set<string>();
  const recordIds = new Set<string>();
  events.forEach((event, index) => {
    for (const call of event.functionCalls ?? []) {
      if (callIds.has(call.id))
        throw invalid('DUPLICATE_FUNCTION_CALL_ID', `function-call id ${JSON.stringify(call.id)} appears twice`, { index, functionCallId: call.id });
      callIds.add(call.id);
    }
    const ownResponses = new Set<string>();
    for (const response of event.functionResponses ?? []) {
      if (responseIds.has(response.id)) {
        throw invalid('DUPLICATE_FUNCTION_CALL_ID', `function-response id ${JSON.stringify(response.id)} appears twice`, {
          index,
          functionCallId: response.id,
        });
      }
      responseIds.add(response.id);
      ownResponses.add(response.id);
    }
    const referencedCalls = new Set<string>();
    const refs: { functionCallId: string; recordId: string }[] = [];
    for (const widget of event.widgets ?? []) {
      if (isWidgetDescriptor(widget) && widget.sealedResultRef)
        refs.push({ functionCallId: widget.correlation.functionCallId, recordId: widget.sealedResultRef.recordId });
    }
    for (const [functionCallId, ref] of Object.entries(event.sealedResultRefs ?? {})) refs.push({ functionCallId, recordId: ref.recordId });
    for (const ref of refs) {
      if (!ownResponses.has(ref.functionCallId)) {
        throw invalid(
          'UNMATCHED_SEALED_RESULT_REF',
          `a sealedResultRef names function call ${JSON.stringify(ref.functionCallId)}, which has no function response in its event`,
          {
            index,
            functionCallId: ref.functionCallId,
          },
        );
      }
      if (recordIds.has(ref.recordId))
        throw invalid('DUPLICATE_SEALED_RESULT_REF', 'a sealed record is referenced twice', { index, functionCallId: ref.functionCallId });
      if (referencedCalls.has(ref.functionCallId)) {
        throw invalid('DUPLICATE_SEALED_RESULT_REF', `function call ${JSON.stringify(ref.functionCallId)} carries more than one reference`, {
          index,
          functionCallId: ref.functionCallId,
        });
      }
      recordIds.add(ref.recordId);
      referencedCalls.add(ref.functionCallId);
    }
  });
}

/**
 * The core finalizer, run on every append path (appends, imports at creation): cross-validates, strips every
 * protected field the caller sent (top level and `customMetadata`), and stamps the values the provenance dictates.
 */
export function finalizeEvents(events: LedgerEventInput[], provenance: AppendProvenance): FinalizedEvent[] {
  crossValidate(events);
  return events.map((event) => finalizeOne(event, provenance));
}

function finalizeOne(event: LedgerEventInput, provenance: AppendProvenance): FinalizedEvent {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    if ((PROTECTED_FIELDS as readonly string[]).includes(key) || value === undefined) continue;
    body[key] = key === 'customMetadata' ? withoutProtectedKeys(value as Record<string, unknown>) : value;
  }
  return { ...(jsonClone(body) as Record<string, unknown>), ...stampFor(provenance, event), author: event.author };
}

function withoutProtectedKeys(metadata: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(metadata).filter(([key]) => !PROTECTED_METADATA_KEYS.has(key)));
}

/** Deep copy through JSON: the stored body is exactly what the digest covered (no undefined, no shared references). */
function jsonClone(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

const SEALED_ONLY_KEYS = new Set(['structuredContent', '_meta']);

/**
 * The public serialization of a stored event: an explicit projection (unknown stored keys never leak). A function
 * response whose result is sealed (referenced by a widget or the event-level map) loses `structuredContent` and
 * `_meta`, so sealed bytes can never surface here even if a caller put them into the ledger.
 */
export function toPublicEvent(row: { id: number; incarnation: number; createdAt: Date; body: Record<string, unknown> }): PublicEvent {
  const b = row.body as Partial<FinalizedEvent> & LedgerEventInput;
  const sealedCalls = new Set<string>([
    ...(b.widgets ?? [])
      .filter(isWidgetDescriptor)
      .filter((w) => w.sealedResultRef)
      .map((w) => w.correlation.functionCallId),
    ...Object.keys(b.sealedResultRefs ?? {}),
  ]);
  const out: PublicEvent = {
    id: row.id,
    incarnation: row.incarnation,
    timestamp: new Date(row.createdAt).toISOString(),
    author: b.author,
    audience: b.audience === 'app_audit' ? 'app_audit' : null,
    invocationOrigin: b.invocationOrigin as PublicEvent['invocationOrigin'],
    emitter: b.emitter as PublicEvent['emitter'],
    immediateCaller: (b.immediateCaller ?? null) as PublicEvent['immediateCaller'],
  };
  if (b.invocationId !== undefined) out.invocationId = b.invocationId;
  if (b.content !== undefined) out.content = b.content;
  if (b.functionCalls !== undefined) out.functionCalls = b.functionCalls;
  if (b.functionResponses !== undefined) {
    out.functionResponses = b.functionResponses.map((r) =>
      sealedCalls.has(r.id) && r.response ? { ...r, response: Object.fromEntries(Object.entries(r.response).filter(([k]) => !SEALED_ONLY_KEYS.has(k))) } : r,
    );
  }
  if (b.widgets !== undefined) out.widgets = b.widgets;
  if (b.sealedResultRefs !== undefined) out.sealedResultRefs = b.sealedResultRefs;
  if (b.actions !== undefined) out.actions = b.actions;
  if (b.customMetadata !== undefined) out.customMetadata = b.customMetadata;
  return out;
}
