import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { RegistryPurge, RegistryRevoke, type CascadeRequest, type ParsedRequestOf } from '@apphost/contracts';
import { SERVICE_CONTEXT, type ServiceContext } from '@apphost/runtime';
import { GenerationFanout } from '../generations/generation-fanout';

/**
 * binding-registry in the lifecycle deletion cascade (any replica serves it). What it holds for a session is live
 * connection generations, possibly on other instances: `revoke` ends them on every owner, so their server processes
 * exit now rather than at idle eviction; `purge` does it again for one acquired in between. The directory keeps
 * nothing of the session (its keys are digests). Both are idempotent: a repeat ends nothing and succeeds.
 */
@Injectable()
export class CascadeHandlers {
  constructor(
    private readonly fanout: GenerationFanout,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @BusHandler(RegistryRevoke)
  revoke(r: ParsedRequestOf<typeof RegistryRevoke>): Promise<{ ended: number }> {
    return this.endSession(r, 'revoke');
  }

  @BusHandler(RegistryPurge)
  purge(r: ParsedRequestOf<typeof RegistryPurge>): Promise<{ ended: number }> {
    return this.endSession(r, 'purge');
  }

  private async endSession(r: CascadeRequest, step: 'revoke' | 'purge'): Promise<{ ended: number }> {
    const ended = await this.fanout.endSession(r.session, r.incarnation);
    this.context.logger.info({ step, incarnation: r.incarnation, ended }, 'cascade: ended the connection generations of a deleted session');
    return { ended };
  }
}
