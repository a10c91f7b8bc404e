import { isNoResponders, type BusClient } from '@apphost/bus';
import { AppHostError, CONNECTION_GENERATION_GONE, ConnectionReasons, type BusContract, type RequestOf, type ResponseOf } from '@apphost/contracts';

/** What a caller holds to address a connection generation (the registry's `acquire-generation` answer). */
export interface GenerationAddress {
  generationId: string;
  fence: number;
  ownerInstanceId: string;
}

/**
 * A retry re-acquires: it gets a new generation, or (while the dead owner's lease still runs) the registry's own
 * OWNER_GONE with the lease as its hint. One second keeps that second round short.
 */
export const OWNER_GONE_RETRY_AFTER_MS = 1000;

/**
 * Sends one operation to the process that owns a connection generation (`apphost.binding-registry.conn.<owner>.*`).
 * An owner that is gone has no responders: that is the generation's death, reported as FAILED_PRECONDITION with
 * `details.reason = CONNECTION_GENERATION_GONE` — never retried elsewhere (no silent migration); retryable by the
 * caller, whose retry acquires again.
 */
export async function requestOnGeneration<C extends BusContract>(
  bus: BusClient,
  contract: C,
  address: GenerationAddress,
  payload: Omit<RequestOf<C>, 'ref'>,
  options: { timeoutMs?: number } = {},
): Promise<ResponseOf<C>> {
  const body = { ...payload, ref: { generationId: address.generationId, fence: address.fence } } as RequestOf<C>;
  try {
    return await bus.request(contract, body, { instance: { id: address.ownerInstanceId, segment: 'conn' }, timeoutMs: options.timeoutMs });
  } catch (error) {
    if (isNoResponders(error)) {
      throw new AppHostError(
        'FAILED_PRECONDITION',
        `connection generation ${address.generationId} is gone: its owner ${address.ownerInstanceId} is not running`,
        {
          retryable: true,
          details: ConnectionReasons.details(CONNECTION_GENERATION_GONE, {
            generationId: address.generationId,
            why: 'OWNER_GONE',
            retryAfterMs: OWNER_GONE_RETRY_AFTER_MS,
          }),
        },
      );
    }
    throw error;
  }
}
