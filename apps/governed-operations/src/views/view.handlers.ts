import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import {
  GovernedCloseView,
  GovernedGetView,
  GovernedOpenView,
  GovernedRenewView,
  GovernedReplayView,
  type ParsedRequestOf,
  type ResponseOf,
} from '@apphost/contracts';
import { ViewBootstrap } from './view-bootstrap';
import { ViewService } from './view.service';

/** governed-operations' View operations (queue group `governed-operations`: View state is in the coordination store, so any replica serves any View). */
@Injectable()
export class ViewHandlers {
  constructor(
    @Inject(ViewBootstrap) private readonly bootstrap: ViewBootstrap,
    @Inject(ViewService) private readonly views: ViewService,
  ) {}

  @BusHandler(GovernedOpenView)
  openView(r: ParsedRequestOf<typeof GovernedOpenView>): Promise<ResponseOf<typeof GovernedOpenView>> {
    return this.bootstrap.open(r);
  }

  @BusHandler(GovernedGetView)
  getView(r: ParsedRequestOf<typeof GovernedGetView>): Promise<ResponseOf<typeof GovernedGetView>> {
    return this.views.get(r);
  }

  @BusHandler(GovernedCloseView)
  closeView(r: ParsedRequestOf<typeof GovernedCloseView>): Promise<ResponseOf<typeof GovernedCloseView>> {
    return this.views.close(r);
  }

  @BusHandler(GovernedRenewView)
  renewView(r: ParsedRequestOf<typeof GovernedRenewView>): Promise<ResponseOf<typeof GovernedRenewView>> {
    return this.views.renew(r);
  }

  @BusHandler(GovernedReplayView)
  replayView(r: ParsedRequestOf<typeof GovernedReplayView>): Promise<ResponseOf<typeof GovernedReplayView>> {
    return this.views.replay(r);
  }
}
