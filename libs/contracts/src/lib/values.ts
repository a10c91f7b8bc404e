import { z } from 'zod';

/** Identifier segments: printable, bounded, and never containing NATS subject tokens (`.`, `*`, `>`) or spaces. */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_\-:@]{0,127}$/;

export const tenantIdSchema = z.string().regex(ID_PATTERN, 'tenant id: 1-128 chars of [A-Za-z0-9_-:@]');
export const appNameSchema = z.string().regex(ID_PATTERN, 'app name: 1-128 chars of [A-Za-z0-9_-:@]');
export const userIdSchema = z.string().min(1).max(256);
export const sessionIdSchema = z.string().regex(ID_PATTERN, 'session id: 1-128 chars of [A-Za-z0-9_-:@]');
export const incarnationSchema = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** An instance id is a single subject token, so it can route work to exactly one process. */
export const instanceIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'instance id: 1-64 chars of [A-Za-z0-9_-]');
export type InstanceId = z.infer<typeof instanceIdSchema>;

export const scopeSchema = z.string().min(1).max(128);

/** The authenticated caller, as the gateway resolved it from a verified token. */
export const principalSchema = z.object({
  tenant: tenantIdSchema,
  subject: z.string().min(1).max(256),
  scopes: z.array(scopeSchema).max(64),
  /**
   * Set on a view token (scope `view`, minted by `POST /v1/sessions/{id}/view-tokens`): the principal may act only on
   * this one session, in the incarnation it was minted for (a session deleted and created again under the same id is
   * another session to the token), and its Views. Absent: no restriction beyond tenant, user and scopes.
   */
  restrictedTo: z.strictObject({ appName: z.string().min(1).max(128), sessionId: z.string().min(1).max(128), incarnation: incarnationSchema }).optional(),
});
export type Principal = z.infer<typeof principalSchema>;

/** A session's identity; its incarnation travels separately wherever it matters. */
export const sessionKeySchema = z.object({
  tenant: tenantIdSchema,
  appName: appNameSchema,
  userId: userIdSchema,
  sessionId: sessionIdSchema,
});
export type SessionKey = z.infer<typeof sessionKeySchema>;

export const SERVICE_NAMES = [
  'gateway',
  'binding-registry',
  'catalog-policy',
  'sealed-result-store',
  'lifecycle-store',
  'governed-operations',
  'export-audit',
] as const;
export const serviceNameSchema = z.enum(SERVICE_NAMES);
export type ServiceName = z.infer<typeof serviceNameSchema>;
