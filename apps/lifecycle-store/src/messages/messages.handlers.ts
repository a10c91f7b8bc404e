import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import {
  LifecycleClaimMessage,
  LifecycleConsumeMessage,
  LifecycleDecideMessage,
  LifecycleFindConsumedMessage,
  LifecycleGetMessage,
  LifecycleListMessages,
  LifecycleRecordMessage,
  type ParsedRequestOf,
  type ResponseOf,
} from '@apphost/contracts';
import { MessagesService } from './messages.service';

/** Pending `ui/message`s on the bus: governed-operations records, decides and claims; runtimes list and consume. */
@Injectable()
export class MessagesHandlers {
  constructor(@Inject(MessagesService) private readonly messages: MessagesService) {}

  @BusHandler(LifecycleRecordMessage)
  record(request: ParsedRequestOf<typeof LifecycleRecordMessage>): Promise<ResponseOf<typeof LifecycleRecordMessage>> {
    return this.messages.record(request);
  }

  @BusHandler(LifecycleGetMessage)
  get(request: ParsedRequestOf<typeof LifecycleGetMessage>): Promise<ResponseOf<typeof LifecycleGetMessage>> {
    return this.messages.get(request.session, request.messageId);
  }

  @BusHandler(LifecycleDecideMessage)
  decide(request: ParsedRequestOf<typeof LifecycleDecideMessage>): Promise<ResponseOf<typeof LifecycleDecideMessage>> {
    return this.messages.decide(request);
  }

  @BusHandler(LifecycleListMessages)
  list(request: ParsedRequestOf<typeof LifecycleListMessages>): Promise<ResponseOf<typeof LifecycleListMessages>> {
    return this.messages.list(request);
  }

  @BusHandler(LifecycleClaimMessage)
  claim(request: ParsedRequestOf<typeof LifecycleClaimMessage>): Promise<ResponseOf<typeof LifecycleClaimMessage>> {
    return this.messages.claim(request);
  }

  @BusHandler(LifecycleConsumeMessage)
  consume(request: ParsedRequestOf<typeof LifecycleConsumeMessage>): Promise<ResponseOf<typeof LifecycleConsumeMessage>> {
    return this.messages.consume(request);
  }

  @BusHandler(LifecycleFindConsumedMessage)
  findConsumed(request: ParsedRequestOf<typeof LifecycleFindConsumedMessage>): Promise<ResponseOf<typeof LifecycleFindConsumedMessage>> {
    return this.messages.findConsumed(request.session, request.invocationId);
  }
}
