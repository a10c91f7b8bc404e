import { BusClient } from '@apphost/bus';
import {
  AppHostError,
  CatalogAppCatalog,
  CatalogReasons,
  GovernedReasons,
  type BoundGeneration,
  type BoundToolHandle,
  type ResponseOf,
  type ViewCaller,
  type ViewRevocationReason,
} from '@apphost/contracts';
import { canonicalizeUri, matchResourcePolicy } from '@apphost/policy';
import type { Logger } from '@apphost/runtime';
import { assertRegisterFits } from '../conversation/context-update';
import { assertAdvertised } from '../conversation/modalities';
import { describeFailure } from '../tool-batches/batch-plan';
import { viewNotFound } from '../views/view-access';
import { revocationReasonOf, revokedError } from '../views/view-checks';
import { isGenerationGone, type ViewCollaborators } from '../views/view-collaborators';
import { resourcePolicyOf } from '../views/view-opening';
import type { StoredView, ViewRecord, ViewRecords } from '../views/view-records';
import type { ViewTeardown } from '../views/view-teardown';
import type { ArgumentSchemas } from './argument-schemas';
import type { BarrierPass, OperationTarget, ViewContext } from './ports';

/**
 * The post-queue freshness barrier, run immediately before any effect (a remote call, or a retained outcome's
 * delivery): everything that can revoke the View is asked again now, not trusted from admission. In the RFC's order:
 * the principal, the session in the View's incarnation, the View record itself (live, not torn down, lease, grant),
 * the toolset's binding, and then the target on the View's own generation: a tool must be in a fresh app catalog of
 * exactly that generation with arguments its `inputSchema` accepts; a URI must be allowed by the resource policy; a
 * model-context update may use only the advertised modalities and must fit the profile's per-register cap.
 * A View that fails a liveness check is ended here (with the revocation reason), so every later call fails fast.
 *
 * Every question is asked after the queue slot and answered before the effect; none depends on another's answer, so
 * they are asked concurrently and read in that order (one round trip of latency, not five). A tool's app catalog is
 * one of them: listed on the View's generation as opened (a read, no effect), it is used only when the record read
 * now names exactly that generation, and a listing that finds the generation gone is the GENERATION_GONE answer.
 */
export class ViewBarrier {
  constructor(
    private readonly bus: BusClient,
    private readonly records: ViewRecords,
    private readonly peers: ViewCollaborators,
    private readonly teardown: ViewTeardown,
    private readonly schemas: ArgumentSchemas,
    private readonly logger: Logger,
  ) {}

  async check(ctx: ViewContext, target: OperationTarget, caller: ViewCaller): Promise<BarrierPass> {
    const opened = ctx.view.record;
    // A tool's fresh app catalog is listed on the View's generation as opened, together with the liveness questions:
    // its listing goes through the generation's owner, so it also answers whether the generation lives (no separate
    // generation-state request). It is only used if the record read now names exactly that generation.
    const listed = target.kind === 'tool' ? openedGenerationOf(opened) : null;
    // Independent questions, asked together; answered in order (a revoked principal wins over any other answer).
    const answers = await Promise.allSettled([
      // The principal and the session, read now in one lifecycle-store request.
      this.peers.standing(caller.principal, opened.session),
      this.records.find(opened.viewId),
      opened.widget.toolsetId ? this.peers.toolset(opened.widget.toolsetId) : null,
      // Asked for every target: a retained outcome is delivered, and a model-context update or message committed,
      // without any call upstream that would find the generation gone by itself.
      listed ? this.appCatalog(listed) : opened.generation ? this.peers.generationAlive(opened.generation) : true,
    ]);
    const [standing, stored, toolset, aliveOrCatalog] = answers;
    const { revoked, session: current } = valueOf(standing);
    if (revoked) {
      await this.end(opened.viewId, 'PRINCIPAL_REVOKED');
      throw new AppHostError('PERMISSION_DENIED', 'the principal was revoked', { details: GovernedReasons.details('PRINCIPAL_REVOKED') });
    }
    if (!current || current.state !== 'ACTIVE' || current.incarnation !== opened.incarnation) await this.revoke(opened.viewId, 'SESSION_DELETED');
    const record = this.liveRecord(valueOf(stored), opened);
    if (record.expiresAt !== null && Date.parse(record.expiresAt) <= Date.now()) await this.revoke(record.viewId, 'LEASE_EXPIRED');
    const binding = valueOf(toolset);
    if (!binding || binding.state !== 'PROFILE_BOUND') await this.revoke(record.viewId, 'TOOLSET_REVOKED');
    if (binding?.bindingGeneration !== record.bindingGeneration || binding?.bindingRevision !== record.bindingRevision)
      await this.revoke(record.viewId, 'TOOLSET_REBOUND');
    const catalog = listed ? catalogOrGone(aliveOrCatalog) : null;
    if (listed ? catalog === null : !valueOf(aliveOrCatalog as PromiseSettledResult<boolean>)) await this.revoke(record.viewId, 'GENERATION_GONE');

    const generation = boundGenerationOf(record);
    const pass: BarrierPass = { generation, tool: null, canonicalUri: null, session: record.session, incarnation: record.incarnation };
    if (target.kind === 'tool') {
      // The listing serves only if it was taken on exactly the generation the record names now; else a fresh one.
      const tools = listed && catalog && sameGeneration(listed, generation) ? catalog.tools : (await this.appCatalog(generation)).tools;
      return { ...pass, tool: this.appTool(tools, generation, target.name, target.arguments) };
    }
    if (target.kind === 'read') return { ...pass, canonicalUri: allowedUri(ctx, target.uri) };
    if (target.kind === 'context') {
      // What the bootstrap advertised (the same intersection), then the per-register cap: refused whole, never cut.
      assertAdvertised(ctx.profile, 'updateModelContext', target.update.content, target.update.structuredContent !== null);
      assertRegisterFits(ctx.policy, target.update);
    }
    return pass;
  }

  /** The View's fresh app catalog on its own generation (tools/list answers its declarations). */
  appCatalog(generation: BoundGeneration): Promise<ResponseOf<typeof CatalogAppCatalog>> {
    // The profile carries no app-call policy of its own: every app-visible tool of the generation.
    return this.bus.request(CatalogAppCatalog, { generation, policy: { mode: 'all-app-visible' } });
  }

  /** The tool's current app-catalog entry on exactly the View's generation, its arguments checked against it. */
  private appTool(tools: readonly BoundToolHandle[], generation: BoundGeneration, name: string, args: Record<string, unknown>): BoundToolHandle {
    const tool = tools.find(
      (t) =>
        t.nativeName === name && t.toolsetId === generation.toolsetId && t.execution.generationId === generation.generationId && t.visibility.includes('app'),
    );
    if (!tool)
      throw new AppHostError('PERMISSION_DENIED', `${name} is not a tool this View may call`, {
        details: GovernedReasons.details('TOOL_NOT_APP_VISIBLE', { tool: name }),
      });
    this.schemas.check(name, tool.declaration['inputSchema'], args);
    return tool;
  }

  /** The record as it stands now: live, not ended, the same grant as the caller authenticated with. */
  private liveRecord(stored: StoredView | null, opened: ViewRecord): ViewRecord {
    if (!stored) throw viewNotFound(); // purged meanwhile (its session was deleted)
    const { record } = stored;
    if (record.state !== 'ACTIVE' || record.mode !== 'live' || !record.generation) throw revokedError(revocationReasonOf(record));
    if (record.grantDigest !== opened.grantDigest || record.generation.generationId !== opened.generation?.generationId)
      throw new AppHostError('PERMISSION_DENIED', 'the view grant is not valid for this view', { details: GovernedReasons.details('VIEW_GRANT_INVALID') });
    return record;
  }

  /** Ends the View and refuses: FAILED_PRECONDITION `VIEW_REVOKED` with the reason. */
  async revoke(viewId: string, reason: ViewRevocationReason): Promise<never> {
    await this.end(viewId, reason);
    throw revokedError(reason);
  }

  /** Phase 1 (and 2) of the View's end; a failure here is logged: the refusal stands, the sweep finishes it. */
  private async end(viewId: string, reason: ViewRevocationReason): Promise<void> {
    try {
      await this.teardown.end(viewId, reason);
    } catch (error) {
      this.logger.warn({ viewId, reason, error: describeFailure(error) }, 'ending a revoked view failed: the sweep retries');
    }
  }
}

/** An answer asked together with others, read in order: its value, or its failure thrown now. */
function valueOf<T>(settled: PromiseSettledResult<T>): T {
  if (settled.status === 'rejected') throw settled.reason;
  return settled.value;
}

/** The app catalog asked with the liveness questions: its value, null when it found the generation gone, else its failure. */
function catalogOrGone(settled: PromiseSettledResult<unknown>): ResponseOf<typeof CatalogAppCatalog> | null {
  if (settled.status === 'rejected' && isGenerationGone(settled.reason)) return null;
  return valueOf(settled as PromiseSettledResult<ResponseOf<typeof CatalogAppCatalog>>);
}

/** The generation of the View as it was opened (null when the record cannot name one: the barrier refuses it below). */
function openedGenerationOf(opened: ViewRecord): BoundGeneration | null {
  try {
    return boundGenerationOf(opened);
  } catch {
    return null;
  }
}

function sameGeneration(a: BoundGeneration, b: BoundGeneration): boolean {
  return (
    a.generationId === b.generationId &&
    a.fence === b.fence &&
    a.ownerInstanceId === b.ownerInstanceId &&
    a.toolsetId === b.toolsetId &&
    a.bindingGeneration === b.bindingGeneration &&
    a.connectionClass === b.connectionClass
  );
}

/** The generation a View is bound to, as catalog-policy and the owner address it. */
export function boundGenerationOf(record: ViewRecord): BoundGeneration {
  const { generation, widget, bindingGeneration } = record;
  if (!generation || !widget.toolsetId || bindingGeneration === null) throw revokedError(revocationReasonOf(record));
  return { ...generation, toolsetId: widget.toolsetId, bindingGeneration };
}

/** The canonical form of a requested URI the profile's resource policy allows; PERMISSION_DENIED otherwise. */
function allowedUri(ctx: ViewContext, uri: string): string {
  let canonical: string | null = null;
  try {
    canonical = canonicalizeUri(uri);
  } catch {
    // Not canonicalizable: matches no policy entry, denied below like any URI outside the policy.
  }
  if (canonical !== null && matchResourcePolicy(resourcePolicyOf(ctx.profile), canonical)) return canonical;
  throw new AppHostError('PERMISSION_DENIED', 'the resource is outside the resource policy', {
    details: CatalogReasons.details('RESOURCE_POLICY_DENIED', { uri: uri.slice(0, 2048) }),
  });
}
