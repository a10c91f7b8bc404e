import type { HostProfile } from './registry-values';

/**
 * The View-related profile fields with their defaults applied: the one place the defaults live. Every later
 * consumer (bootstrap, View RPC, registers, replay) reads them through `viewPolicyOf`.
 */
export const VIEW_POLICY_DEFAULTS = {
  views: { leaseMs: 15 * 60_000, maxDocumentBytes: 8 * 1024 * 1024 },
  rpc: { perViewPerMinute: 600, perSessionPerMinute: 3000, queueDepth: 16, maxRequestBytes: 256 * 1024 },
  idempotency: { retentionMs: 24 * 3600_000 },
  replay: { tools: [] as string[], readOnlyHint: false },
  registers: { maxRegisterBytes: 16 * 1024, maxSessionBytes: 128 * 1024 },
  audit: { maxRecordsPerView: 200, maxAgeMs: 24 * 3600_000 },
  callbacks: { message: 'confirm' as 'accept' | 'confirm', requestTeardown: 'host-page' as 'host-page' | 'accept' },
} as const;

export interface ViewPolicy {
  views: { leaseMs: number; maxDocumentBytes: number };
  rpc: { perViewPerMinute: number; perSessionPerMinute: number; queueDepth: number; maxRequestBytes: number };
  idempotency: { retentionMs: number };
  replay: { tools: readonly string[]; readOnlyHint: boolean };
  registers: { maxRegisterBytes: number; maxSessionBytes: number };
  audit: { maxRecordsPerView: number; maxAgeMs: number };
  callbacks: { message: 'accept' | 'confirm'; requestTeardown: 'host-page' | 'accept' };
}

export function viewPolicyOf(profile: HostProfile): ViewPolicy {
  const d = VIEW_POLICY_DEFAULTS;
  return {
    views: { ...d.views, ...profile.views },
    rpc: { ...d.rpc, ...profile.rpc },
    idempotency: { ...d.idempotency, ...profile.idempotency },
    replay: { tools: profile.replay?.tools ?? d.replay.tools, readOnlyHint: profile.replay?.readOnlyHint ?? d.replay.readOnlyHint },
    registers: { ...d.registers, ...profile.registers },
    audit: { ...d.audit, ...profile.audit },
    callbacks: {
      message: profile.callbackPolicy.message ?? d.callbacks.message,
      requestTeardown: profile.callbackPolicy.requestTeardown ?? d.callbacks.requestTeardown,
    },
  };
}
