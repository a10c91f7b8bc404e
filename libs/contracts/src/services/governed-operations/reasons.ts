import { defineReasons, type ReasonOf } from '../../lib/errors';

/**
 * Every `details.reason` governed-operations raises. Per-call failures (`MIXED_BATCH`, `TOOL_DRIFT`, …) are not
 * errors: they are `error.code` in a function response.
 */
export const GovernedReasons = defineReasons(['DUPLICATE_FUNCTION_CALL_ID']);
export type GovernedReason = ReasonOf<typeof GovernedReasons>;
