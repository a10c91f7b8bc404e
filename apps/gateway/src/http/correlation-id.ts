/** The gateway uses the plane-wide correlation id (set on every request by the runtime's middleware). */
export { CORRELATION_ID_HEADER, resolveCorrelationId } from '@apphost/runtime';
