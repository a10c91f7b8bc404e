import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { LifecycleGetSessionStanding, LifecycleGetWidgetStanding, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { LifecycleService } from '../sessions/lifecycle.service';
import type { RevocationKey } from '../sessions/lifecycle.repository';
import { subjectDigest, type PrincipalIdentity } from './principal-revocation.repository';

/**
 * `get-session-standing`: the principal's revocation and the session's record in one request, each as
 * `get-principal-revocation` and `get-session` read them; a session that does not exist answers `session: null` rather
 * than NOT_FOUND. `get-widget-standing` adds the widget's event, read as `get-event` reads it, on the record's
 * incarnation. Both are one statement (`LifecycleService.standing`): one round trip, one snapshot.
 */
@Injectable()
export class SessionStandingHandlers {
  constructor(@Inject(LifecycleService) private readonly lifecycle: LifecycleService) {}

  @BusHandler(LifecycleGetSessionStanding)
  async get(request: ParsedRequestOf<typeof LifecycleGetSessionStanding>): Promise<ResponseOf<typeof LifecycleGetSessionStanding>> {
    const { revokedAt, session } = await this.lifecycle.standing({ session: request.session, principal: revocationKeyOf(request.principal) });
    return { revoked: revokedAt !== null, session };
  }

  @BusHandler(LifecycleGetWidgetStanding)
  async widget(request: ParsedRequestOf<typeof LifecycleGetWidgetStanding>): Promise<ResponseOf<typeof LifecycleGetWidgetStanding>> {
    const { revokedAt, session, event } = await this.lifecycle.standing({
      session: request.session,
      principal: revocationKeyOf(request.principal),
      event: { eventId: request.eventId, functionCallId: request.functionCallId },
    });
    return { revoked: revokedAt !== null, session, event };
  }
}

function revocationKeyOf(principal: PrincipalIdentity): RevocationKey {
  return { tenant: principal.tenant, subjectDigest: subjectDigest(principal) };
}
