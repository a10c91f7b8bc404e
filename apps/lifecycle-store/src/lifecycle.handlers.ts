import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import {
  LifecycleAppendEvents,
  LifecycleCreateSession,
  LifecycleDeleteSession,
  LifecycleGetEvent,
  LifecycleGetSession,
  LifecycleListEvents,
  LifecycleListSessions,
  type ParsedRequestOf,
} from '@apphost/contracts';
import { LifecycleService } from './sessions/lifecycle.service';

/** The bus surface of the lifecycle-store: requests arrive validated against their contracts. */
@Injectable()
export class LifecycleHandlers {
  constructor(@Inject(LifecycleService) private readonly lifecycle: LifecycleService) {}

  @BusHandler(LifecycleCreateSession)
  create(request: ParsedRequestOf<typeof LifecycleCreateSession>) {
    return this.lifecycle.create(request);
  }

  @BusHandler(LifecycleGetSession)
  get(request: ParsedRequestOf<typeof LifecycleGetSession>) {
    return this.lifecycle.get(request.session);
  }

  @BusHandler(LifecycleListSessions)
  listSessions(request: ParsedRequestOf<typeof LifecycleListSessions>) {
    return this.lifecycle.listSessions(request);
  }

  @BusHandler(LifecycleDeleteSession)
  delete(request: ParsedRequestOf<typeof LifecycleDeleteSession>) {
    return this.lifecycle.delete(request);
  }

  @BusHandler(LifecycleAppendEvents)
  append(request: ParsedRequestOf<typeof LifecycleAppendEvents>) {
    return this.lifecycle.append(request);
  }

  @BusHandler(LifecycleListEvents)
  list(request: ParsedRequestOf<typeof LifecycleListEvents>) {
    return this.lifecycle.list(request);
  }

  @BusHandler(LifecycleGetEvent)
  getEvent(request: ParsedRequestOf<typeof LifecycleGetEvent>) {
    return this.lifecycle.getEvent(request);
  }
}
