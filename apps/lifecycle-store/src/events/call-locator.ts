import { isDeepStrictEqual } from 'node:util';
import { isWidgetDescriptor, type DescriptorSealedResultRef, type EventWidget, type LedgerEventInput, type LegacyWidget } from '@apphost/contracts';

/** A function call as its event recorded it: the model-catalog name and the arguments. */
export interface RecordedCall {
  name: string;
  args: Record<string, unknown>;
}

/** What one event says about one of its function calls: the widget that renders it, the call itself, its sealed reference. */
export interface LocatedCall {
  widget: EventWidget | null;
  call: RecordedCall | null;
  sealedResultRef: DescriptorSealedResultRef | null;
}

/**
 * Finds one function call on one stored event, in this order: a descriptor correlated to it (with or without a
 * sealed reference), a legacy widget of its tool, an event-level sealed reference. Null when the event carries
 * none of them for that call (or when its legacy widget cannot be told apart from another one).
 */
export function locateCall(event: LedgerEventInput, functionCallId: string): LocatedCall | null {
  const widgets = event.widgets ?? [];
  const recorded = event.functionCalls?.find((c) => c.id === functionCallId);
  const call = recorded ? { name: recorded.name, args: recorded.args ?? {} } : null;
  const eventLevel = event.sealedResultRefs?.[functionCallId] ?? null;

  const descriptor = widgets.filter(isWidgetDescriptor).find((w) => w.correlation.functionCallId === functionCallId);
  if (descriptor) return { widget: descriptor, call, sealedResultRef: descriptor.sealedResultRef ?? eventLevel };
  const legacy = legacyWidgetOf(event, functionCallId);
  if (legacy) return { widget: legacy, call: call ?? { name: legacy.tool, args: legacy.toolArgs }, sealedResultRef: eventLevel };
  if (eventLevel) return { widget: null, call, sealedResultRef: eventLevel };
  return null;
}

/** The event's calls in order (function calls first, then responses not already listed), with args when recorded. */
function callsOf(event: LedgerEventInput): { id: string; name: string; args?: Record<string, unknown> }[] {
  const calls: { id: string; name: string; args?: Record<string, unknown> }[] = (event.functionCalls ?? []).map((c) => ({ ...c }));
  const seen = new Set(calls.map((c) => c.id));
  for (const r of event.functionResponses ?? []) if (!seen.has(r.id)) calls.push({ id: r.id, name: r.name });
  return calls;
}

/**
 * A legacy widget carries no call id, only its tool's name (what a profile-less toolset emits). It is matched to
 * the call by that name; several widgets of one tool are told apart by the call's recorded arguments, else by
 * position (the k-th call of the tool renders the k-th widget, tool batches keep both in call order) — but only
 * when every call of that tool has a widget, otherwise a failed call would shift the others onto the wrong one.
 */
function legacyWidgetOf(event: LedgerEventInput, functionCallId: string): LegacyWidget | null {
  const calls = callsOf(event);
  const call = calls.find((c) => c.id === functionCallId);
  if (!call) return null;
  const ofTool = (event.widgets ?? []).filter((w): w is LegacyWidget => !isWidgetDescriptor(w) && w.tool === call.name);
  const candidates = call.args ? ofTool.filter((w) => isDeepStrictEqual(w.toolArgs, call.args)) : ofTool;
  if (candidates.length === 0) return null;
  // Identical widgets are interchangeable: any of them renders this call the same way.
  if (candidates.every((w) => isDeepStrictEqual(w, candidates[0]))) return candidates[0];
  if (call.args) return null;
  const sameTool = calls.filter((c) => c.name === call.name);
  return sameTool.length === ofTool.length ? ofTool[sameTool.indexOf(call)] : null;
}
