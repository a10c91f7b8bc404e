import { SetMetadata } from '@nestjs/common';
import type { BusContract } from '@apphost/contracts';
import type { HandlerRouting } from '../bus-server';

export const BUS_HANDLER_METADATA = 'apphost:bus-handler';

export interface BusHandlerMetadata {
  contract: BusContract;
  routing: HandlerRouting;
}

/** Marks a provider method as the handler of a bus operation; BusModule subscribes it at bootstrap. */
export function BusHandler(contract: BusContract, routing: HandlerRouting = {}): MethodDecorator {
  return SetMetadata<string, BusHandlerMetadata>(BUS_HANDLER_METADATA, { contract, routing });
}
