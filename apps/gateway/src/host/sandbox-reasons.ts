import { defineReasons, type ReasonOf } from '@apphost/contracts';

/** Why the sandbox origin refuses to serve a proxy page. */
export const SandboxReasons = defineReasons([
  /** The `host` parameter is not an origin allowed to embed Views (the browser-route allowlist; in development the gateway's own). */
  'SANDBOX_HOST_NOT_ALLOWED',
  /** The `csp` parameter is not a policy the View bootstrap builds (widened, reordered or malformed). */
  'SANDBOX_CSP_INVALID',
  /** No such file on the sandbox origin. */
  'SANDBOX_NOT_FOUND',
]);
export type SandboxReason = ReasonOf<typeof SandboxReasons>;
