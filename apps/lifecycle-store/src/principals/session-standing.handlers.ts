import { Inject, Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { AppHostError, LifecycleGetSessionStanding, LifecycleGetWidgetStanding, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import { LifecycleService } from '../sessions/lifecycle.service';
import { PrincipalRevocationRepository } from './principal-revocation.repository';

/**
 * `get-session-standing`: the principal's revocation and the session's record in one request, each read now exactly
 * as `get-principal-revocation` and `get-session` read it (concurrently, on two pool connections); a session that
 * does not exist answers `session: null` rather than NOT_FOUND. `get-widget-standing` adds the widget's event, read
 * as `get-event` reads it, right after the session's record (the revocation is read beside both).
 */
@Injectable()
export class SessionStandingHandlers {
  constructor(
    @Inject(PrincipalRevocationRepository) private readonly revocations: PrincipalRevocationRepository,
    @Inject(LifecycleService) private readonly lifecycle: LifecycleService,
  ) {}

  @BusHandler(LifecycleGetSessionStanding)
  async get(request: ParsedRequestOf<typeof LifecycleGetSessionStanding>): Promise<ResponseOf<typeof LifecycleGetSessionStanding>> {
    const [revocation, session] = await Promise.all([
      this.revocations.state(request.principal),
      this.lifecycle.get(request.session).catch((error: unknown) => {
        if (error instanceof AppHostError && error.code === 'NOT_FOUND') return null;
        throw error;
      }),
    ]);
    return { revoked: revocation.revoked, session };
  }

  @BusHandler(LifecycleGetWidgetStanding)
  async widget(request: ParsedRequestOf<typeof LifecycleGetWidgetStanding>): Promise<ResponseOf<typeof LifecycleGetWidgetStanding>> {
    const [revocation, standing] = await Promise.all([
      this.revocations.state(request.principal),
      this.lifecycle.sessionWithEvent({ session: request.session, eventId: request.eventId, functionCallId: request.functionCallId }),
    ]);
    return { revoked: revocation.revoked, ...standing };
  }
}
