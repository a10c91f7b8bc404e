import { z } from 'zod';
import { defineContract } from './contract';
import { instanceIdSchema, serviceNameSchema, type ServiceName } from './values';

/** A store a service depends on, as it reports itself: readiness plus the identity it persisted. */
export const storeReportSchema = z.object({
  kind: z.enum(['postgres', 'redis', 'memory']),
  name: z.string(),
  ready: z.boolean(),
  /** For PostgreSQL stores: the schema, its persisted namespace id and the applied migrations. */
  schema: z.string().optional(),
  namespace: z.string().optional(),
  createdAt: z.string().optional(),
  migrations: z.array(z.string()).optional(),
  /** For stores with a persisted format revision (the sealed-result store): callers pin namespace + revision. */
  revision: z.string().optional(),
});
export type StoreReport = z.infer<typeof storeReportSchema>;

export const describeRequestSchema = z.object({}).strict();
export const describeResponseSchema = z.object({
  service: serviceNameSchema,
  version: z.string(),
  instanceId: instanceIdSchema,
  transport: z.enum(['nats', 'in-process']),
  startedAt: z.string(),
  stores: z.array(storeReportSchema),
});
export type DescribeResponse = z.infer<typeof describeResponseSchema>;

/** Every service answers `describe`; each service's own contract file instantiates this for its subject. */
export function describeContract(service: ServiceName) {
  return defineContract({ service, operation: 'describe', version: 1, request: describeRequestSchema, response: describeResponseSchema });
}
