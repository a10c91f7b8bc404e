import { z } from 'zod';
import { defineContract } from '../../lib/contract';
import { sessionKeySchema } from '../../lib/values';
import { hostContextInputSchema, openViewAnswerSchema, viewCallerSchema } from './view-values';

/**
 * A View document of at least this many UTF-8 bytes stays with its connection owner and reaches the caller by
 * reference: catalog-policy and governed-operations never carry it (each hop costs an encode, a decode and a copy of
 * the whole: about 2 ms for 218 KB and 35 ms for 4.3 MB on the 2-core bench machine). Below it, the extra fetch round
 * trip costs more than carrying the document.
 */
export const VIEW_DOCUMENT_REFERENCE_FROM_BYTES = 64 * 1024;

/**
 * `apphost.governed-operations.open-view.v1`: the render bootstrap of one widget, in the RFC's order, every failure
 * revoking what was reserved so far: (1) authorize the caller, the session (ACTIVE; its incarnation binds the rest)
 * and the widget (`lifecycle-store.get-event.v1`); (2) reserve a View reference on the recorded producing
 * connection generation; (3) resolve the sealed record (digest verified); (4) one `resources/read` of the
 * descriptor's `resourceUri` on that generation, under the profile's resource policy; (5) exactly one content item of
 * that canonical URI and `text/html;profile=mcp-app`, within the profile's document limit; (6) activate the grant.
 * A document of `VIEW_DOCUMENT_REFERENCE_FROM_BYTES` or more comes back by reference (`document.htmlLiteralReference`:
 * its JSON string literal), for the caller to fetch from its connection owner.
 * A legacy widget, a missing or corrupt sealed record, a gone or unrecorded generation, or a revoked toolset answer
 * the read-only placeholder instead. A widget the caller may not see is NOT_FOUND.
 */
export const GovernedOpenView = defineContract({
  service: 'governed-operations',
  operation: 'open-view',
  version: 1,
  request: z.strictObject({
    caller: viewCallerSchema,
    session: sessionKeySchema.strict(),
    eventId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    functionCallId: z.string().min(1).max(128),
    hostContext: hostContextInputSchema.optional(),
  }),
  response: openViewAnswerSchema,
  /**
   * FAILED_PRECONDITION reasons: `DOCUMENT_NOT_FOUND` (no content item of the URI), `DOCUMENT_AMBIGUOUS` (several),
   * `DOCUMENT_MIME_MISMATCH`, `DOCUMENT_ENCODING_INVALID`; PAYLOAD_TOO_LARGE `DOCUMENT_TOO_LARGE`;
   * PERMISSION_DENIED `PRINCIPAL_REVOKED`.
   */
  errors: [
    'INVALID_ARGUMENT',
    'NOT_FOUND',
    'FAILED_PRECONDITION',
    'PERMISSION_DENIED',
    'PAYLOAD_TOO_LARGE',
    'RESOURCE_EXHAUSTED',
    'UNAVAILABLE',
    'DEADLINE_EXCEEDED',
  ],
});
