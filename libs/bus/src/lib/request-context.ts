import { AsyncLocalStorage } from 'node:async_hooks';
import type { Span } from '@opentelemetry/api';

/**
 * What follows one request across every hop: set once at the edge (the HTTP interceptor, or the bus server for a
 * request it serves) and read by the bus client, the logger and the tracer. Handlers never pass it by hand.
 */
export interface RequestContext {
  correlationId: string;
  /** Epoch ms after which the caller has given up; every nested request is bounded by it. */
  deadline: number | undefined;
  /** The span of the hop being served: the parent of every span this request causes. */
  span?: Span;
}

const storage = new AsyncLocalStorage<RequestContext>();

export const RequestContexts = {
  run<T>(context: RequestContext, fn: () => T): T {
    return storage.run(context, fn);
  },
  current(): RequestContext | undefined {
    return storage.getStore();
  },
  /** Milliseconds left before the current request's deadline (undefined when there is none). */
  remainingMs(): number | undefined {
    const deadline = storage.getStore()?.deadline;
    return deadline === undefined ? undefined : deadline - Date.now();
  },
  /** `ms`, shortened to what the current request has left (at least 1): for timeouts that travel in payloads. */
  bound(ms: number): number {
    const remaining = RequestContexts.remainingMs();
    return remaining === undefined ? ms : Math.max(1, Math.min(ms, remaining));
  },
};
