import { Injectable } from '@nestjs/common';
import { BusHandler, RequestContexts, type HandlerContext } from '@apphost/bus';
import {
  RegistryReasons,
  ConnCallTool,
  ConnCancelCall,
  ConnCloseBinding,
  ConnEndSession,
  ConnGenerationState,
  ConnListResources,
  ConnListResourceTemplates,
  ConnListTools,
  ConnPing,
  ConnReadResource,
  ConnRelease,
  ConnRetain,
  type ParsedRequestOf,
  type ResponseOf,
} from '@apphost/contracts';
import { AppHostError } from '@apphost/contracts';
import { OwnedGenerations } from '../generations/owned-generations';
import { referenceLargeTexts } from './text-references';

const conn = { routing: 'instance', instanceSegment: 'conn' } as const;

/**
 * Operations on the connection generations this process owns, served on `apphost.binding-registry.conn.<instanceId>.*`:
 * only this process can reach its connections, so nothing here ever runs elsewhere.
 */
@Injectable()
export class ConnectionHandlers {
  constructor(private readonly owned: OwnedGenerations) {}

  @BusHandler(ConnRetain, conn)
  async retain(r: ParsedRequestOf<typeof ConnRetain>): Promise<ResponseOf<typeof ConnRetain>> {
    return { references: await this.owned.local.retain(r.ref, r.leaseId, r.holder) };
  }

  @BusHandler(ConnRelease, conn)
  release(r: ParsedRequestOf<typeof ConnRelease>): ResponseOf<typeof ConnRelease> {
    return this.owned.local.release(r.ref, r.leaseId);
  }

  @BusHandler(ConnGenerationState, conn)
  generationState(r: ParsedRequestOf<typeof ConnGenerationState>): ResponseOf<typeof ConnGenerationState> {
    return this.owned.local.state(r.ref);
  }

  @BusHandler(ConnListTools, conn)
  listTools(r: ParsedRequestOf<typeof ConnListTools>): Promise<ResponseOf<typeof ConnListTools>> {
    return this.owned.local.run(r.ref, async (connection, local) => {
      const walked = await connection.listTools(local.policy.discovery);
      return { tools: walked.items, pages: walked.pages, bytes: walked.bytes };
    });
  }

  @BusHandler(ConnListResources, conn)
  listResources(r: ParsedRequestOf<typeof ConnListResources>): Promise<ResponseOf<typeof ConnListResources>> {
    return this.owned.local.run(r.ref, async (connection, local) => {
      const walked = await connection.listResources(local.policy.discovery);
      return { resources: walked.items, pages: walked.pages, bytes: walked.bytes };
    });
  }

  @BusHandler(ConnListResourceTemplates, conn)
  listResourceTemplates(r: ParsedRequestOf<typeof ConnListResourceTemplates>): Promise<ResponseOf<typeof ConnListResourceTemplates>> {
    return this.owned.local.run(r.ref, async (connection, local) => {
      const walked = await connection.listResourceTemplates(local.policy.discovery);
      return { resourceTemplates: walked.items, pages: walked.pages, bytes: walked.bytes };
    });
  }

  @BusHandler(ConnCallTool, conn)
  callTool(r: ParsedRequestOf<typeof ConnCallTool>): Promise<ResponseOf<typeof ConnCallTool>> {
    return this.owned.local.run(r.ref, async (connection, local) => {
      if (local.calls.has(r.callId))
        throw new AppHostError('INVALID_ARGUMENT', 'a call with this id is already in flight on this generation', {
          details: RegistryReasons.details('CALL_ID_IN_FLIGHT'),
        });
      const controller = new AbortController();
      local.calls.set(r.callId, controller);
      const progress: { progress: number; total?: number; message?: string }[] = [];
      try {
        const outcome = await connection.callTool(
          { name: r.name, arguments: r.arguments, continuation: r.continuation },
          {
            timeoutMs: RequestContexts.bound(Math.min(r.timeoutMs ?? local.policy.callTimeoutMs, local.policy.callTimeoutMs)),
            signal: controller.signal,
            onProgress: (p) => progress.length < 256 && progress.push(p),
          },
        );
        return outcome.kind === 'complete' ? { ...outcome, progress } : outcome;
      } finally {
        local.calls.delete(r.callId);
      }
    });
  }

  @BusHandler(ConnCancelCall, conn)
  cancel(r: ParsedRequestOf<typeof ConnCancelCall>): ResponseOf<typeof ConnCancelCall> {
    return { cancelled: this.owned.local.cancelCall(r.ref, r.callId) };
  }

  @BusHandler(ConnReadResource, conn)
  read(r: ParsedRequestOf<typeof ConnReadResource>, context: HandlerContext): Promise<ResponseOf<typeof ConnReadResource>> {
    return this.owned.local.run(r.ref, async (connection, local) => {
      if (r.textReferenceFromBytes === undefined)
        return (await connection.readResource(r.uri, local.policy.readTimeoutMs)) as ResponseOf<typeof ConnReadResource>;
      const answer = (await connection.readResourceKeepingLongTexts(r.uri, local.policy.readTimeoutMs)) as ResponseOf<typeof ConnReadResource>;
      return { ...answer, contents: referenceLargeTexts(answer.contents, r.textReferenceFromBytes, context.hold) };
    });
  }

  @BusHandler(ConnPing, conn)
  ping(r: ParsedRequestOf<typeof ConnPing>): Promise<ResponseOf<typeof ConnPing>> {
    return this.owned.local.run(r.ref, async (connection, local) => {
      await connection.ping(local.policy.readTimeoutMs);
      return { ok: true as const, pid: connection.pid };
    });
  }

  @BusHandler(ConnCloseBinding, conn)
  async closeBinding(r: ParsedRequestOf<typeof ConnCloseBinding>): Promise<ResponseOf<typeof ConnCloseBinding>> {
    return { closed: await this.owned.local.closeBinding(r.toolsetId, r.bindingGeneration, r.scope) };
  }

  @BusHandler(ConnEndSession, conn)
  async endSession(r: ParsedRequestOf<typeof ConnEndSession>): Promise<ResponseOf<typeof ConnEndSession>> {
    return { ended: await this.owned.local.endSession(r.session, r.incarnation) };
  }
}
