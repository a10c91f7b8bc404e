/** What a handler knows about the request it serves, beyond the validated payload. */
export interface HandlerContext {
  subject: string;
  correlationId: string;
  /** Epoch ms after which the caller has given up; nested requests are bounded by it through `RequestContexts`. */
  deadline: number | undefined;
}
