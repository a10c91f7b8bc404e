import type { ErrorCode } from '@apphost/contracts';

/** Where the bus reports each handled request; the service runtime backs it with Prometheus. */
export interface BusMetrics {
  observeHandled(subject: string, outcome: ErrorCode | 'OK', seconds: number): void;
  observeRequested(subject: string, outcome: ErrorCode | 'OK', seconds: number): void;
}

export const NO_BUS_METRICS: BusMetrics = {
  observeHandled: () => undefined,
  observeRequested: () => undefined,
};
