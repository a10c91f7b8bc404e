import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { GovernedViewRpc, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { ViewRpcService } from './view-rpc.service';

/** The View RPC (queue group `governed-operations`, as every View handler: any replica serves any View's message). */
@Injectable()
export class ViewRpcHandlers {
  constructor(@Inject(ViewRpcService) private readonly rpc: ViewRpcService) {}

  @BusHandler(GovernedViewRpc)
  viewRpc(r: ParsedRequestOf<typeof GovernedViewRpc>): Promise<ResponseOf<typeof GovernedViewRpc>> {
    return this.rpc.handle(r);
  }
}
