import { z } from 'zod';
import { appNameSchema, connectionClassSchema, registryIdSchema, sessionIdSchema, unavailableToolsetSchema, userIdSchema } from '@apphost/contracts';

export const catalogQuerySchema = z.object({ appName: appNameSchema, userId: userIdSchema.optional(), fresh: z.enum(['true', 'false']).optional() }).strict();

/** One model-visible tool as the runtime hands it to its model: the declaration, its handle and, for UI tools, the resource. */
export const publicCatalogToolSchema = z.object({
  name: z.string(),
  handleId: z.string(),
  toolsetId: registryIdSchema,
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()).optional(),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  annotations: z.record(z.string(), z.unknown()).optional(),
  /** The tool's canonical `ui://` resource (UI tools only). */
  resourceUri: z.string().optional(),
  connectionClass: connectionClassSchema,
});

export const publicCatalogSchema = z.object({
  sessionId: sessionIdSchema,
  appName: appNameSchema,
  incarnation: z.number().int().min(1),
  tools: z.array(publicCatalogToolSchema),
  /** Selected toolsets that could not be discovered, and why; their tools are absent. Empty when all answered. */
  unavailable: z.array(unavailableToolsetSchema),
});
export type PublicCatalog = z.infer<typeof publicCatalogSchema>;

export const approveBodySchema = z
  .object({
    fingerprint: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
  })
  .strict();
export const toolMethodSchema = z.string().regex(/^[^:]{1,256}:approve$/, 'expected <toolName>:approve');
