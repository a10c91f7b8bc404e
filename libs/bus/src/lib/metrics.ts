import type { ErrorCode } from '@apphost/contracts';

/** `served`: a reply this process parked for chunked transfer; `fetched`: one this process read in chunks. */
export type TransferSide = 'served' | 'fetched';

/** Where the bus reports each handled request; the service runtime backs it with Prometheus. */
export interface BusMetrics {
  observeHandled(subject: string, outcome: ErrorCode | 'OK', seconds: number): void;
  observeRequested(subject: string, outcome: ErrorCode | 'OK', seconds: number): void;
  /**
   * One chunked reply (over the payload limit), once it ended: its operation's subject, its size and how it ended.
   * Served: `OK` (every chunk read), `DEADLINE_EXCEEDED` (its TTL passed first), `UNAVAILABLE` (the server stopped),
   * `RESOURCE_EXHAUSTED` / `PAYLOAD_TOO_LARGE` (refused). Fetched: `OK` or the error the request failed with.
   */
  observeTransfer?(subject: string, side: TransferSide, outcome: ErrorCode | 'OK', bytes: number): void;
}

export const NO_BUS_METRICS: BusMetrics = {
  observeHandled: () => undefined,
  observeRequested: () => undefined,
  observeTransfer: () => undefined,
};
