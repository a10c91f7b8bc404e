import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { GovernedClaimMessage, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { MessageClaims } from './message-claims';

/** A runtime's claim on an accepted `ui/message` (the gateway's `POST …/messages/{messageId}:claim`). */
@Injectable()
export class MessageClaimHandlers {
  constructor(@Inject(MessageClaims) private readonly claims: MessageClaims) {}

  @BusHandler(GovernedClaimMessage)
  claim(request: ParsedRequestOf<typeof GovernedClaimMessage>): Promise<ResponseOf<typeof GovernedClaimMessage>> {
    return this.claims.claim(request);
  }
}
