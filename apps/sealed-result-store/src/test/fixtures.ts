import { randomBytes } from 'node:crypto';
import type { SealedCreateScope, SealedEnvelope, SealedRecordKey, SessionKey } from '@apphost/contracts';

/** Test fixtures of the sealed-result store: sessions, envelopes and keys. */

export const uid = (label: string): string => `${label}-${randomBytes(6).toString('hex')}`;

export function newSession(overrides: Partial<SessionKey> = {}): SessionKey {
  return { tenant: 'acme', appName: 'dash', userId: uid('user'), sessionId: uid('sess'), ...overrides };
}

export function scopeOf(session: SessionKey, incarnation: number, functionCallId: string): SealedCreateScope {
  return { session, incarnation, functionCallId };
}

export function keyOf(scope: SealedCreateScope, eventId: string, recordId: string): SealedRecordKey {
  return { session: scope.session, incarnation: scope.incarnation, functionCallId: scope.functionCallId, eventId, recordId };
}

/** A full merged CallToolResult plus its RefreshInvocationRecord; `structured` goes into structuredContent. */
export function envelopeFor(functionCallId: string, structured: Record<string, unknown> = { rows: [1, 2, 3] }): SealedEnvelope {
  return {
    result: {
      content: [{ type: 'text', text: 'dashboard ready' }],
      structuredContent: structured,
      _meta: { 'io.apphost/secret-hint': 'not for the model' },
    },
    refresh: {
      serverId: 'srv-bqaa',
      toolsetId: 'ts-bqaa',
      nativeToolName: 'show_agent_dashboard',
      arguments: { kind: 'inline', value: { days: 7 } },
      catalogGeneration: 'cat-3',
      bindingRevision: 'k1:v1:0f0e',
      replayClassification: { source: 'profile:bqaa', revision: 'r7' },
      initiatingOrigin: 'model',
      correlation: { invocationId: uid('inv'), functionCallId },
    },
  };
}

/** An envelope whose canonical form is at least `bytes` long (1 KiB rows of varied text). */
export function largeEnvelope(functionCallId: string, bytes: number): SealedEnvelope {
  const rows: string[] = [];
  for (let i = 0; i * 1027 < bytes; i++) rows.push(`${i}:`.padEnd(1024, String.fromCharCode(97 + (i % 26))));
  return envelopeFor(functionCallId, { rows });
}
