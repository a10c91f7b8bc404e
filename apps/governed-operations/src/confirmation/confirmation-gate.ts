import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { canonicalDigest, canonicalize } from '@apphost/canonical-json';
import type { PendingConfirmation, Principal, ToolsetSelection } from '@apphost/contracts';
import { declarationIdentity } from '../tool-batches/batch-plan';
import type { BatchConfig } from '../governed.config';
import { BATCH_CONFIG } from '../governed.tokens';
import type { AdmittedCall, CallContext } from '../calls/call-pipeline';
import { ConfirmationPermits } from './confirmation-permits';

export const REQUEST_CONFIRMATION_TOOL = 'adk_request_confirmation';
export const CONFIRMATION_REQUIRED_MESSAGE =
  "This call needs the user's confirmation and has not run. Its result comes in a later event, once the user decides.";

/**
 * The host confirmation policy at batch admission. `holds` is the one evaluation per call (a pure function of the
 * toolset's declared policy and the tool's native name: no live session, context or credentials to consult, so
 * nothing can toggle it between evaluations); the decision path never evaluates it again.
 */
@Injectable()
export class ConfirmationGate {
  constructor(
    @Inject(ConfirmationPermits) private readonly permits: ConfirmationPermits,
    @Inject(BATCH_CONFIG) private readonly config: BatchConfig,
  ) {}

  holds(admitted: AdmittedCall): boolean {
    const policy = admitted.toolset.requireConfirmation;
    return policy === true || (Array.isArray(policy) && policy.includes(admitted.handle.nativeName));
  }

  /** Seals the call into a permit; the call does not run until a decision takes the permit. */
  async issue(admitted: AdmittedCall, ctx: CallContext, principal: Principal, toolsets: ToolsetSelection[] | undefined): Promise<PendingConfirmation> {
    const { call, handle } = admitted;
    const confirmationId = `cf-${randomBytes(16).toString('hex')}`;
    const argumentsDigest = canonicalDigest('confirmation-arguments', call.arguments);
    const expiresAt = new Date(this.permits.now() + this.config.confirmationTtlMs).toISOString();
    await this.permits.put(
      {
        v: 1,
        confirmationId,
        principal: { tenant: principal.tenant, subject: principal.subject },
        session: ctx.key,
        incarnation: ctx.incarnation,
        invocationId: ctx.invocationId,
        functionCallId: call.functionCallId,
        tool: call.tool,
        toolsets: toolsets ?? null,
        toolsetId: handle.toolsetId,
        nativeName: handle.nativeName,
        declarationDigest: declarationDigest(handle.declaration),
        bindingRevision: admitted.toolset.bindingRevision,
        uiAssociated: admitted.uiAssociated,
        arguments: canonicalize(call.arguments),
        argumentsDigest,
        expiresAt,
        ...(ctx.provenance?.path === 'ui-message' ? { continuesMessage: true as const } : {}),
      },
      this.config.confirmationTtlMs,
    );
    return { confirmationId, functionCallId: call.functionCallId, tool: call.tool, arguments: call.arguments, argumentsDigest, expiresAt };
  }
}

export function declarationDigest(declaration: Record<string, unknown>): string {
  return createHash('sha256').update(declarationIdentity(declaration)).digest('hex');
}

/** The ADK-compatible function call that asks the user to decide (its id is the confirmation id). */
export function requestConfirmationCall(pending: PendingConfirmation): { id: string; name: string; args: Record<string, unknown> } {
  return {
    id: pending.confirmationId,
    name: REQUEST_CONFIRMATION_TOOL,
    args: {
      originalFunctionCall: { id: pending.functionCallId, name: pending.tool, args: pending.arguments },
      toolConfirmation: { hint: `Allow ${pending.tool} to run with these arguments?`, confirmed: false },
      expiresAt: pending.expiresAt,
    },
  };
}
