import type { ByteReference } from '@apphost/contracts';

/** What a handler knows about the request it serves, beyond the validated payload. */
export interface HandlerContext {
  subject: string;
  correlationId: string;
  /** Epoch ms after which the caller has given up; nested requests are bounded by it through `RequestContexts`. */
  deadline: number | undefined;
  /**
   * Holds `bytes` in this process and returns a reference any bus client can fetch them by (`BusClient.fetchReference`):
   * how a handler hands a large document on without the services between it and the consumer carrying it. The bytes
   * are held like a large reply — freed once read whole, at the transfer TTL, or a second after this request's
   * deadline — and refused alike (PAYLOAD_TOO_LARGE over the whole capacity, RESOURCE_EXHAUSTED while it is full).
   * `label` names the operation in the transfer metrics.
   */
  hold(label: string, bytes: Uint8Array): ByteReference;
}
