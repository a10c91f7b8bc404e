import { z } from 'zod';
import { authConfig, type GatewayAuthSettings } from './auth/auth.config';

/**
 * The largest body `POST /v1/views/{viewId}/rpc` admits: the largest `rpc.maxRequestBytes` a profile may set.
 * governed-operations enforces the profile's own (smaller) limit from the size the gateway measured.
 */
export const VIEW_RPC_MAX_BODY_BYTES = 8 * 1024 * 1024;

const viewRpcSchema = z.object({
  /**
   * The request deadline of a View RPC (a caller's `x-apphost-timeout-ms` may only shorten it): a View's
   * `tools/call` may run up to its profile's call timeout, which HTTP_REQUEST_TIMEOUT_MS does not know of.
   */
  GATEWAY_VIEW_RPC_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(120_000),
});

/** What the gateway's config schema yields: authentication, the view-token secret, and the View RPC deadline. */
export interface GatewaySettings extends GatewayAuthSettings {
  viewRpcTimeoutMs: number;
}

/** The gateway's settings as one service config schema: every bad variable one listed problem naming it. */
export const gatewayConfig = z.looseObject({}).transform((env, ctx): GatewaySettings => {
  const auth = authConfig.safeParse(env);
  const rpc = viewRpcSchema.safeParse(env);
  if (!auth.success || !rpc.success) {
    for (const issue of [...(auth.error?.issues ?? []), ...(rpc.error?.issues ?? [])])
      ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    return z.NEVER;
  }
  return { ...auth.data, viewRpcTimeoutMs: rpc.data.GATEWAY_VIEW_RPC_TIMEOUT_MS };
});
