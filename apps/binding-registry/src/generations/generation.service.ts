import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { BusClient, isNoResponders } from '@apphost/bus';
import {
  AppHostError,
  RegistryReasons,
  CONNECTION_GENERATION_GONE,
  ConnListTools,
  ConnRelease,
  ConnRetain,
  type ResponseOf,
  type RegistryDiscoverToolset,
  type GenerationHandle,
  type HostProfile,
  type ParsedRequestOf,
  type RegistryAcquireGeneration,
  type ToolsetSpec,
} from '@apphost/contracts';
import { McpConnection, type Clock } from '@apphost/mcp';
import { FAULT_POINTS, type FaultPoints } from '@apphost/runtime';
import { BindingService } from '../bindings/binding.service';
import { KeyRing } from '../keys/key-ring';
import { RegistryStoreAccess } from '../store/store-access';
import type { GenerationRow } from '../store/generations.repository';
import type { BindingRow, ToolsetRow } from '../store/toolsets.repository';
import type { RegistryFaultPoint } from '../registry.faults';
import { REGISTRY_CLOCK, REGISTRY_CONFIG, REGISTRY_INSTANCE, type RegistryInstance } from '../registry.tokens';
import type { RegistryConfig } from '../registry.config';
import { generationKey, principalIdentity, SECURITY_DOMAIN_PURPOSE } from './generation-key';
import { policyOf, sharesOneConnection, type GenerationPolicy } from './generation-policy';
import type { SessionScope } from './local-generations';
import { OwnedGenerations } from './owned-generations';
import { resolveTarget } from './target';
import { generationGone } from './generation-errors';

type AcquireRequest = ParsedRequestOf<typeof RegistryAcquireGeneration>;
type DiscoverRequest = ParsedRequestOf<typeof RegistryDiscoverToolset>;
type ConnectionClass = AcquireRequest['connectionClass'];
type Holder = AcquireRequest['holder'];
type Listed = ResponseOf<typeof ConnListTools>;

/** What the acquisitions of one request share (read once per request, whatever the number of classes). */
interface AcquireScope {
  toolset: ToolsetRow;
  binding: BindingRow;
  profile: HostProfile | undefined;
  policy: GenerationPolicy;
  session: SessionScope | null;
  securityDomain: string;
  /** The class whose connection serves `connectionClass` (app-safe serves both under a profile without callbacks). */
  wireClassOf(connectionClass: ConnectionClass): ConnectionClass;
}

/** The caller's view of an acquired generation (without the lease id). */
function handleOf(row: GenerationRow, scope: AcquireScope, connectionClass: ConnectionClass): Omit<GenerationHandle, 'leaseId'> {
  return {
    generationId: row.generationId,
    ownerInstanceId: row.ownerInstance,
    fence: row.fence,
    toolsetId: row.toolsetId,
    bindingGeneration: row.bindingGeneration,
    // The class asked for, even when the app-safe connection serves it: callers keep their per-class bookkeeping.
    connectionClass,
    advertisesUi: row.advertisesUi,
    bindingRevision: row.advertisesUi ? scope.binding.bindingRevision : null,
  };
}
const CLAIM_ATTEMPTS = 3;

/**
 * Acquire: find the one live generation of a key across all replicas, or claim it here and open its connection.
 * A reference for the caller is then taken on the owner (locally, or on its per-instance subject).
 */
@Injectable()
export class GenerationService {
  constructor(
    private readonly store: RegistryStoreAccess,
    private readonly bindings: BindingService,
    private readonly keys: KeyRing,
    private readonly owned: OwnedGenerations,
    private readonly bus: BusClient,
    @Inject(REGISTRY_INSTANCE) private readonly instance: RegistryInstance,
    @Inject(REGISTRY_CONFIG) private readonly config: RegistryConfig,
    @Inject(FAULT_POINTS) private readonly faults: FaultPoints<RegistryFaultPoint>,
    @Inject(REGISTRY_CLOCK) private readonly clock: Clock,
  ) {}

  async acquire(request: AcquireRequest): Promise<GenerationHandle> {
    const scope = await this.scopeOf(request);
    const { row, leaseId } = await this.acquireIn(scope, scope.wireClassOf(request.connectionClass), request.holder);
    return { ...handleOf(row, scope, request.connectionClass), leaseId };
  }

  /**
   * Discovery of one toolset in one request: the scope (toolset, binding, profile, security domain) read once for
   * every class, each wire class acquired (claimed here if needed), listed by its owner under a reference, then
   * released. Classes served by one connection share one listing. The first class asked for that failed decides the
   * error, as if the classes had been discovered one after the other.
   */
  async discover(request: DiscoverRequest): Promise<ResponseOf<typeof RegistryDiscoverToolset>> {
    const scope = await this.scopeOf(request);
    const wires = request.connectionClasses.map((c) => scope.wireClassOf(c));
    const distinct = [...new Set(wires)];
    const settled = await Promise.allSettled(distinct.map((wire) => this.acquireAndList(scope, wire, request.holder)));
    const classes = request.connectionClasses.map((connectionClass, i) => {
      const listing = distinct.indexOf(wires[i]);
      const outcome = settled[listing];
      if (outcome.status === 'rejected') throw outcome.reason;
      return { generation: handleOf(outcome.value.row, scope, connectionClass), listing };
    });
    const listings = settled.map((s) => (s.status === 'fulfilled' ? s.value.listing : { tools: [], pages: 0, bytes: 0 }));
    const { toolset, binding } = scope;
    return {
      toolset: {
        toolsetId: toolset.toolsetId,
        profileId: toolset.profileId,
        state: binding.state,
        bindingGeneration: binding.generation,
        bindingRevision: binding.bindingRevision,
        requireConfirmation: toolset.spec.requireConfirmation ?? false,
        selection: { toolFilter: toolset.spec.toolFilter, namePrefix: toolset.spec.namePrefix, listCacheTtlMs: toolset.spec.listCacheTtlMs },
      },
      classes,
      listings,
    };
  }

  /** What every acquisition of a request shares: the materialized binding, the profile and the generation-key inputs. */
  private async scopeOf(request: Pick<AcquireRequest, 'toolsetId' | 'principal' | 'session'>): Promise<AcquireScope> {
    // Independent reads, concurrently; the binding's error comes first when both fail (as when they ran in order).
    const [materialized, domain] = await Promise.allSettled([
      this.bindings.materialized(request.toolsetId),
      this.keys.derive(SECURITY_DOMAIN_PURPOSE, principalIdentity(request.principal)),
    ]);
    if (materialized.status === 'rejected') throw materialized.reason;
    if (domain.status === 'rejected') throw domain.reason;
    const { toolset, binding, profile } = materialized.value;
    const securityDomain = domain.value;
    const perSession = (profile?.connectionPolicy.affinity ?? 'per-session') === 'per-session';
    if (perSession && !request.session) {
      throw new AppHostError('INVALID_ARGUMENT', 'this toolset keys connections by session: a session and its incarnation are required', {
        details: RegistryReasons.details('SESSION_REQUIRED'),
      });
    }
    const session = perSession && request.session ? { key: request.session.key, incarnation: request.session.incarnation } : null;
    // Under a profile that grants no callbacks, `full` is served by the app-safe connection: one key, one process.
    const shared = sharesOneConnection(profile);
    return {
      toolset,
      binding,
      profile,
      policy: policyOf(profile),
      session,
      securityDomain,
      wireClassOf: (connectionClass) => (shared ? 'app-safe' : connectionClass),
    };
  }

  /** The live generation of one wire class (claimed and opened here if there is none), with one reference for `holder`. */
  private async acquireIn(scope: AcquireScope, wireClass: ConnectionClass, holder: Holder): Promise<{ row: GenerationRow; leaseId: string }> {
    const { toolset, binding, profile, policy, session } = scope;
    const advertisesUi = wireClass === 'app-safe' && binding.state === 'PROFILE_BOUND';
    const key = generationKey({
      toolsetId: toolset.toolsetId,
      bindingGeneration: binding.generation,
      connectionClass: wireClass,
      securityDomain: scope.securityDomain,
      session,
    });

    for (let attempt = 1; ; attempt++) {
      let row = await this.store.generations.findLive(key);
      if (!row) {
        // A claim here may start a server process: it needs a slot of this instance's cap first.
        const releaseSlot = this.owned.local.reserveSlot();
        try {
          await this.store.generations.expireDeadOwner(key);
          row = await this.store.generations.claim({
            generationId: randomUUID(),
            generationKey: key,
            toolsetId: toolset.toolsetId,
            bindingGeneration: binding.generation,
            connectionClass: wireClass,
            advertisesUi,
            ownerInstance: this.instance.instanceId,
            ownerIncarnation: this.instance.incarnation,
          });
          if (row) {
            await this.faults.hit('generation.after-claim');
            this.openClaimed(row, toolset.spec, profile, policy, session);
          }
        } finally {
          releaseSlot();
        }
      }
      if (!row) {
        if (attempt >= CLAIM_ATTEMPTS)
          throw new AppHostError('UNAVAILABLE', 'could not claim the connection generation', { details: RegistryReasons.details('CLAIM_CONTENDED') });
        continue;
      }
      const leaseId = randomUUID();
      try {
        await this.retain(row, leaseId, holder);
      } catch (error) {
        if (attempt < CLAIM_ATTEMPTS && RegistryReasons.of(error) === CONNECTION_GENERATION_GONE) continue;
        throw error;
      }
      return { row, leaseId };
    }
  }

  /**
   * Acquires one wire class, has its owner list it (here when this instance owns it, else on the owner's subject, as
   * `list-tools` would), and releases the reference whatever the listing did.
   */
  private async acquireAndList(scope: AcquireScope, wireClass: ConnectionClass, holder: Holder): Promise<{ row: GenerationRow; listing: Listed }> {
    const { row, leaseId } = await this.acquireIn(scope, wireClass, holder);
    const ref = { generationId: row.generationId, fence: row.fence };
    const local = row.ownerInstance === this.instance.instanceId;
    try {
      const listing = local
        ? await this.owned.local.run(ref, async (connection, generation) => {
            const walked = await connection.listTools(generation.policy.discovery);
            return { tools: walked.items, pages: walked.pages, bytes: walked.bytes };
          })
        : await this.bus.request(
            ConnListTools,
            { ref },
            { instance: { id: row.ownerInstance, segment: 'conn' }, timeoutMs: this.config.connectTimeoutMs + 1000 },
          );
      return { row, listing };
    } finally {
      if (local) {
        try {
          this.owned.local.release(ref, leaseId);
        } catch {
          // Gone already: nothing is held.
        }
      } else {
        await this.bus
          .request(ConnRelease, { ref, leaseId }, { instance: { id: row.ownerInstance, segment: 'conn' }, timeoutMs: this.config.connectTimeoutMs + 1000 })
          .catch(() => undefined);
      }
    }
  }

  /** Opens the connection of a generation this instance just claimed (its class is the row's: the wire class). */
  private openClaimed(row: GenerationRow, spec: ToolsetSpec, profile: HostProfile | undefined, policy: GenerationPolicy, session: SessionScope | null): void {
    const target = resolveTarget(spec, this.config);
    this.owned.local.add(row, policy, session, (onClosed) =>
      McpConnection.open({
        target,
        toolsetId: row.toolsetId,
        connectionClass: row.connectionClass,
        advertiseUi: row.advertisesUi,
        mimeTypes: profile?.extension.mimeTypes,
        protocol: spec.protocol,
        connectTimeoutMs: this.config.connectTimeoutMs,
        requestTimeoutMs: policy.callTimeoutMs,
        mrtr: policy.mrtr,
        clock: this.clock,
        onClosed: (reason) => reason === 'transport' && onClosed(),
      }),
    );
  }

  /**
   * Takes the caller's reference on the owner. The owner is the authority on what it holds: when it answers that
   * the generation is gone, or nothing answers on its subject at all, the directory is corrected before the error
   * goes back to the acquire loop, so the next attempt claims a new generation instead of meeting the dead one again.
   */
  private async retain(row: GenerationRow, leaseId: string, holder: { kind: string; id: string }): Promise<void> {
    try {
      await this.retainOnOwner(row, leaseId, holder);
    } catch (error) {
      if (RegistryReasons.of(error) === CONNECTION_GENERATION_GONE) {
        const why = (error as AppHostError).details?.['why'];
        await this.store.generations.end(row.generationId, row.fence, 'GONE', typeof why === 'string' ? why : 'OWNER_GONE');
      }
      throw error;
    }
  }

  private async retainOnOwner(row: GenerationRow, leaseId: string, holder: { kind: string; id: string }): Promise<void> {
    const ref = { generationId: row.generationId, fence: row.fence };
    if (row.ownerInstance === this.instance.instanceId) {
      await this.owned.local.retain(ref, leaseId, holder);
      return;
    }
    try {
      await this.bus.request(
        ConnRetain,
        { ref, leaseId, holder },
        { instance: { id: row.ownerInstance, segment: 'conn' }, timeoutMs: this.config.connectTimeoutMs + 1000 },
      );
    } catch (error) {
      // The directory still shows the owner alive (its lease has not lapsed) but nothing answers on its subject:
      // it crashed or left the bus. Its lease ends now, so every generation it owned counts as dead at once, and the
      // owner, should it come back, fences itself instead of renewing (docs/decisions/0010). A retry claims anew at once.
      if (isNoResponders(error)) {
        await this.store.generations.endUnreachableOwner(row.ownerInstance, row.ownerIncarnation);
        throw generationGone(row.generationId, 'OWNER_GONE', 0);
      }
      throw error;
    }
  }
}
