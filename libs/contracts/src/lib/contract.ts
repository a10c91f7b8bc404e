import { z } from 'zod';
import type { ErrorCode } from './errors';
import type { ServiceName } from './values';

const OPERATION_PATTERN = /^[a-z][a-z0-9-]*$/;

/**
 * A bus operation: its versioned subject, its request and response schemas, and the domain error codes its
 * handler may return (transport codes such as UNAVAILABLE and OUTCOME_UNKNOWN can come from any operation).
 */
export interface BusContract<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  readonly service: ServiceName;
  readonly operation: string;
  readonly version: number;
  /** `apphost.<service>.<operation>.v<N>`: served by any replica of the service's queue group. */
  readonly subject: string;
  readonly request: Req;
  readonly response: Res;
  readonly errors: readonly ErrorCode[];
}

export type RequestOf<C extends BusContract> = z.input<C['request']>;
export type ParsedRequestOf<C extends BusContract> = z.output<C['request']>;
export type ResponseOf<C extends BusContract> = z.output<C['response']>;

export function defineContract<Req extends z.ZodType, Res extends z.ZodType>(spec: {
  service: ServiceName;
  operation: string;
  version: number;
  request: Req;
  response: Res;
  errors?: readonly ErrorCode[];
}): BusContract<Req, Res> {
  if (!OPERATION_PATTERN.test(spec.operation)) throw new Error(`operation name "${spec.operation}" must match ${OPERATION_PATTERN}`);
  if (!Number.isInteger(spec.version) || spec.version < 1) throw new Error(`contract version must be a positive integer`);
  return Object.freeze({
    service: spec.service,
    operation: spec.operation,
    version: spec.version,
    subject: `apphost.${spec.service}.${spec.operation}.v${spec.version}`,
    request: spec.request,
    response: spec.response,
    errors: Object.freeze([...(spec.errors ?? [])]),
  });
}

/**
 * The subject that reaches one process: `apphost.<service>.<segment>.<instanceId>.<operation>.v<N>`, used to route
 * work to the instance that owns a process-local resource (for example an MCP connection: segment `conn`).
 */
export function instanceSubject(contract: BusContract, instanceId: string, segment = 'instance'): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(instanceId)) throw new Error(`invalid instance id "${instanceId}"`);
  if (!OPERATION_PATTERN.test(segment)) throw new Error(`invalid instance subject segment "${segment}"`);
  return `apphost.${contract.service}.${segment}.${instanceId}.${contract.operation}.v${contract.version}`;
}
