import { z } from 'zod';
import {
  AppHostError,
  GovernedReasons,
  IDEMPOTENCY_META_KEY,
  idempotencyKeySchema,
  jsonRpcIdSchema,
  VIEW_RPC_NOTIFICATIONS,
  VIEW_RPC_REQUESTS,
  type ErrorCode,
  type GovernedReason,
  type JsonRpcId,
  type ViewPolicy,
  type ViewRpcNotificationMethod,
  type ViewRpcRequestMethod,
} from '@apphost/contracts';
import { admitArguments } from '@apphost/policy';
import type { MessageAdmission, ParsedViewMessage } from './ports';
import { checkParams, issuesOf } from './rpc-schemas';

/** One JSON-RPC 2.0 request (with `id`) or notification (without): nothing else at the top level. */
const envelopeSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: jsonRpcIdSchema.optional(),
  method: z.string(),
  params: z.unknown().optional(),
});

/** Longest method name an error repeats back. */
const MAX_ECHOED_METHOD = 128;

/** Whom an error answers: the request's id, or `notification: true` (never answered: logged, then `accepted`). */
type Subject = { id: JsonRpcId } | { notification: true } | Record<string, never>;

const isRequestMethod = (method: string): method is ViewRpcRequestMethod => (VIEW_RPC_REQUESTS as readonly string[]).includes(method);
const isNotificationMethod = (method: string): method is ViewRpcNotificationMethod => (VIEW_RPC_NOTIFICATIONS as readonly string[]).includes(method);

/**
 * Admission of one message by structure and size only (nothing is asked of any store): the profile's size limit,
 * one JSON-RPC 2.0 request or notification, a served method, params valid against the published MCP / MCP Apps
 * schema, a well-formed idempotency key, and canonical tool arguments. Tool arguments against the tool's
 * `inputSchema` are the barrier's (the tool is known only there).
 */
export class RpcMessageAdmission implements MessageAdmission {
  parse(message: unknown, bytes: number, policy: ViewPolicy): ParsedViewMessage {
    const envelope = Array.isArray(message) ? null : envelopeSchema.safeParse(message);
    const subject: Subject = envelope?.success ? (envelope.data.id !== undefined ? { id: envelope.data.id } : { notification: true }) : readableId(message);
    if (bytes > policy.rpc.maxRequestBytes) {
      throw refusal('PAYLOAD_TOO_LARGE', 'RPC_REQUEST_TOO_LARGE', `the message is ${bytes} bytes, more than ${policy.rpc.maxRequestBytes}`, subject, {
        bytes,
        limit: policy.rpc.maxRequestBytes,
      });
    }
    if (!envelope) throw refusal('INVALID_ARGUMENT', 'RPC_INVALID_REQUEST', 'a batch is not served: send one message per request', subject);
    if (!envelope.success) {
      throw refusal('INVALID_ARGUMENT', 'RPC_INVALID_REQUEST', 'not a JSON-RPC 2.0 request or notification', subject, { issues: issuesOf(envelope.error) });
    }
    const { id, method, params } = envelope.data;
    return id === undefined ? this.notification(method, params) : this.request(id, method, params);
  }

  private request(id: JsonRpcId, method: string, raw: unknown): ParsedViewMessage {
    const subject = { id };
    if (!isRequestMethod(method)) throw methodNotFound(method, subject);
    const params = paramsOf(method, raw, subject);
    if (method !== 'tools/call' && method !== 'resources/read') return { kind: 'request', id, method, params, idempotencyKey: null };
    if (method === 'tools/call') canonicalArguments(params['arguments'] as Record<string, unknown> | undefined, id);
    return { kind: 'request', id, method, params, idempotencyKey: idempotencyKeyOf(params, id) };
  }

  private notification(method: string, raw: unknown): ParsedViewMessage {
    const subject = { notification: true } as const;
    if (!isNotificationMethod(method)) throw methodNotFound(method, subject);
    return { kind: 'notification', method, params: paramsOf(method, raw, subject) };
  }
}

function paramsOf(method: ViewRpcRequestMethod | ViewRpcNotificationMethod, raw: unknown, subject: Subject): Record<string, unknown> {
  const checked = checkParams(method, raw);
  if (checked.ok) return checked.params;
  throw refusal('INVALID_ARGUMENT', 'RPC_INVALID_PARAMS', `the params of ${method} are malformed`, subject, { method, issues: checked.issues });
}

/** `params._meta["io.apphost/idempotency-key"]`: absent → null; present, it must be 1-128 chars of `[A-Za-z0-9._-]`. */
function idempotencyKeyOf(params: Record<string, unknown>, id: JsonRpcId): string | null {
  const meta = params['_meta'] as Record<string, unknown> | undefined;
  if (!meta || !(IDEMPOTENCY_META_KEY in meta)) return null;
  const key = idempotencyKeySchema.safeParse(meta[IDEMPOTENCY_META_KEY]);
  if (key.success) return key.data;
  throw refusal('INVALID_ARGUMENT', 'IDEMPOTENCY_KEY_INVALID', `_meta["${IDEMPOTENCY_META_KEY}"] must be 1-128 chars of [A-Za-z0-9._-]`, { id });
}

/** The same bound model calls meet: canonical I-JSON (no lone surrogate, unsafe number, …) within the argument limits. */
function canonicalArguments(args: Record<string, unknown> | undefined, id: JsonRpcId): void {
  try {
    admitArguments([{ arguments: args ?? {} }]);
  } catch (error) {
    if (!(error instanceof AppHostError)) throw error;
    throw refusal(
      'INVALID_ARGUMENT',
      'ARGUMENTS_NOT_CANONICAL',
      'the tool arguments are not canonical JSON within the limits',
      { id },
      {
        canonical: error.details?.['canonical'],
      },
    );
  }
}

function methodNotFound(method: string, subject: Subject): AppHostError {
  const echoed = method.slice(0, MAX_ECHOED_METHOD);
  return refusal('NOT_FOUND', 'RPC_METHOD_NOT_FOUND', `the View RPC does not serve ${JSON.stringify(echoed)}`, subject, { method: echoed });
}

/** The id of a message that failed its envelope, when it is there and valid, so the error still answers it. */
function readableId(message: unknown): Subject {
  if (typeof message !== 'object' || message === null || Array.isArray(message) || !('id' in message)) return {};
  const id = jsonRpcIdSchema.safeParse(message.id);
  return id.success ? { id: id.data } : {};
}

function refusal(code: ErrorCode, reason: GovernedReason, message: string, subject: Subject, extra: Record<string, unknown> = {}): AppHostError {
  return new AppHostError(code, message, { details: GovernedReasons.details(reason, { ...subject, ...extra }) });
}
