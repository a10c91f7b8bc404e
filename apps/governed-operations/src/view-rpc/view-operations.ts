import { BusClient } from '@apphost/bus';
import {
  AppHostError,
  ConnCallTool,
  ConnectionReasons,
  ConnListResources,
  ConnListResourceTemplates,
  GovernedReasons,
  type BoundToolHandle,
  type HostProfile,
} from '@apphost/contracts';
import { MCP_REASONS, requestOnGeneration } from '@apphost/mcp';
import { canonicalizeUri, matchResourcePolicy, validateToolResult } from '@apphost/policy';
import type { Logger } from '@apphost/runtime';
import { describeFailure } from '../tool-batches/batch-plan';
import type { ViewCollaborators } from '../views/view-collaborators';
import { resourcePolicyOf } from '../views/view-opening';
import type { ViewBarrier } from './view-barrier';
import type { BarrierPass, ViewContext } from './ports';

/** The largest `resources/read` catalog-policy accepts, for one item and in total. */
const READ_LIMIT_BYTES = 8 * 1024 * 1024;

/** How much longer than the call's own timeout the owner's reply is waited for (its bookkeeping, the bus). */
const CALL_REPLY_GRACE_MS = 2_000;

/**
 * The operations a View runs after the barrier, each on exactly the generation the barrier passed (the owner's
 * per-instance subject: never another connection). Results are checked on the way out: a `CallToolResult` must be
 * valid, every item a read returns must be inside the resource policy (catalog-policy checks both sides), and
 * listings keep only what the policy allows.
 */
export class ViewOperations {
  constructor(
    private readonly bus: BusClient,
    private readonly peers: ViewCollaborators,
    private readonly barrier: ViewBarrier,
    private readonly logger: Logger,
  ) {}

  /**
   * `tools/call` under `callId` (the handle a cancel reaches), one outer request until a terminal answer. The View's
   * generation is app-safe, so its owner continues state-only MRTR rounds itself (fresh request id per leg,
   * `requestState` echoed exactly, within the profile's caps) and fails a round asking for input closed: an
   * `input_required` answer can only mean another class, and fails closed here too. `isError: true` is a normal result.
   */
  async callTool(pass: BarrierPass, tool: BoundToolHandle, args: Record<string, unknown>, callId: string, timeoutMs: number): Promise<Record<string, unknown>> {
    const reply = await requestOnGeneration(
      this.bus,
      ConnCallTool,
      pass.generation,
      { callId, name: tool.nativeName, arguments: args, timeoutMs },
      { timeoutMs: timeoutMs + CALL_REPLY_GRACE_MS },
    );
    if (reply.kind === 'complete') return this.validated(tool, reply.result);
    throw new AppHostError('FAILED_PRECONDITION', 'the tool asked for input, which a View call never answers', {
      details: ConnectionReasons.details(MCP_REASONS.inputRequiredDenied),
    });
  }

  private validated(tool: BoundToolHandle, result: Record<string, unknown>): Record<string, unknown> {
    try {
      return validateToolResult(result) as Record<string, unknown>;
    } catch (error) {
      this.logger.warn({ toolsetId: tool.toolsetId, tool: tool.nativeName, error: describeFailure(error) }, 'view call: tool result failed validation');
      throw new AppHostError('FAILED_PRECONDITION', 'the tool returned a result that is not a valid CallToolResult', {
        details: GovernedReasons.details('TOOL_RESULT_INVALID'),
      });
    }
  }

  /** `resources/read` on the View's generation: the policy on the request and on every returned item, the profile's limits. */
  async readResource(ctx: ViewContext, pass: BarrierPass, uri: string): Promise<Record<string, unknown>> {
    const maxItemBytes = Math.min(ctx.policy.views.maxDocumentBytes, READ_LIMIT_BYTES);
    const read = await this.peers.readResource(pass.generation, {
      uri,
      policy: resourcePolicyOf(ctx.profile),
      limits: { maxItemBytes, maxTotalBytes: READ_LIMIT_BYTES },
    });
    // The server's cache hints ride along: the View sees them, and an idempotent read is never retained past `ttlMs`.
    return {
      contents: read.contents,
      ...(read.ttlMs !== undefined ? { ttlMs: read.ttlMs } : {}),
      ...(read.cacheScope !== undefined ? { cacheScope: read.cacheScope } : {}),
    };
  }

  /** `tools/list`: the declarations of the fresh app catalog, exactly as the server listed them, nothing else. */
  async listTools(pass: BarrierPass): Promise<Record<string, unknown>> {
    const { tools } = await this.barrier.appCatalog(pass.generation);
    return { tools: tools.map((t) => t.declaration) };
  }

  /** `resources/list`: the server's resources whose URI the resource policy allows. */
  async listResources(ctx: ViewContext, pass: BarrierPass): Promise<Record<string, unknown>> {
    const { resources } = await requestOnGeneration(this.bus, ConnListResources, pass.generation, {});
    return { resources: resources.filter((r) => uriAllowed(ctx.profile, r.uri)) };
  }

  /** `resources/templates/list`: the templates every expansion of which stays inside an allowed prefix (`templateAllowed`). */
  async listResourceTemplates(ctx: ViewContext, pass: BarrierPass): Promise<Record<string, unknown>> {
    const { resourceTemplates } = await requestOnGeneration(this.bus, ConnListResourceTemplates, pass.generation, {});
    return { resourceTemplates: resourceTemplates.filter((t) => templateAllowed(ctx.profile, t.uriTemplate)) };
  }
}

/** Whether the profile's resource policy allows `uri` (canonicalized; one that is not canonicalizable never is). */
export function uriAllowed(profile: HostProfile, uri: string): boolean {
  let canonical: string;
  try {
    canonical = canonicalizeUri(uri);
  } catch {
    return false;
  }
  return matchResourcePolicy(resourcePolicyOf(profile), canonical);
}

/**
 * A resource template is listed only when every URI it can expand to is inside an allowed prefix: its literal part
 * (before the first `{`), cut back to the last `/`, must itself be inside a prefix entry of the policy (an exact entry
 * admits only a template without variables equal to it). Reads of expanded URIs are checked again one by one.
 */
export function templateAllowed(profile: HostProfile, uriTemplate: string): boolean {
  const variable = uriTemplate.indexOf('{');
  if (variable < 0) return uriAllowed(profile, uriTemplate);
  const literal = uriTemplate.slice(0, variable);
  const base = literal.slice(0, literal.lastIndexOf('/') + 1);
  if (!base.includes('://') || base.endsWith('://')) return schemeWide(profile, base);
  let canonical: string;
  try {
    canonical = canonicalizeUri(base);
  } catch {
    return false;
  }
  const prefixesOnly = { ...resourcePolicyOf(profile), exact: [] };
  return schemeWide(profile, canonical) || matchResourcePolicy(prefixesOnly, canonical);
}

/** A bare-scheme prefix entry (`ui://`: every resource of the scheme) covering `uri`. */
function schemeWide(profile: HostProfile, uri: string): boolean {
  return profile.resourcePolicy.entries.some(
    (e) => e.match === 'prefix' && /^[a-z][a-z0-9+.-]*:\/\/$/i.test(e.uri) && uri.toLowerCase().startsWith(e.uri.toLowerCase()),
  );
}
