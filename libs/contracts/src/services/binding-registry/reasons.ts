import { defineReasons, type ReasonOf } from '../../lib/errors';

/**
 * `details.reason` of the errors an MCP connection raises (`@apphost/mcp`, run by binding-registry behind its
 * `conn.*` operations, and by `requestOnGeneration` for a generation that is gone).
 */
export const ConnectionReasons = defineReasons([
  'CONNECTION_GENERATION_GONE',
  'CONNECTION_CLOSED',
  'INPUT_REQUIRED_DENIED',
  'INPUT_REQUIRED_ROUNDS_EXCEEDED',
  'INPUT_REQUIRED_TIME_EXCEEDED',
  'INPUT_REQUIRED_FLOW_UNKNOWN',
  'REQUEST_STATE_MISMATCH',
  'CANCELLED',
  'MCP_PROTOCOL_ERROR',
  'MCP_INVALID_RESULT',
  'MCP_CONNECT_FAILED',
  'MCP_TIMEOUT',
  'DISCOVERY_TOO_MANY_PAGES',
  'DISCOVERY_TOO_MANY_BYTES',
  'DISCOVERY_TOO_MANY_ITEMS',
  'DISCOVERY_REPEATED_CURSOR',
  'DISCOVERY_TIMEOUT',
]);
export type ConnectionReason = ReasonOf<typeof ConnectionReasons>;

/** Every `details.reason` binding-registry answers with: its own, and those of the connections it owns. */
export const RegistryReasons = defineReasons([
  'PROFILE_IMMUTABLE',
  'TOOLSET_IMMUTABLE',
  'SECRET_MISSING',
  'STDIO_NOT_ALLOWED',
  'SESSION_REQUIRED',
  'CALL_ID_IN_FLIGHT',
  'CLAIM_CONTENDED',
  /** This instance already holds `REGISTRY_MAX_LIVE_GENERATIONS` live generations (RESOURCE_EXHAUSTED, retryable). */
  'LIVE_GENERATIONS_EXHAUSTED',
  'BINDING_MATERIALIZING',
  'BINDING_CLOSED',
  'REBIND_RACE',
  'MODEL_ONLY',
  'KEY_ROTATION_RACE',
  'DIGEST_VERSION_UNKNOWN',
  'KEY_UNKNOWN',
  'KEY_RETIRED',
  'KEY_RING_EMPTY',
  'KEY_UNWRAP_FAILED',
  ...ConnectionReasons.values,
]);
export type RegistryReason = ReasonOf<typeof RegistryReasons>;
