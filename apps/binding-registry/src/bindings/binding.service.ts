import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  AppHostError,
  RegistryReasons,
  type BindingState,
  type HostProfile,
  type RegistryVerifyBindingRevision,
  type ResponseOf,
  type ToolsetStatus,
} from '@apphost/contracts';
import { FAULT_POINTS, type FaultPoints } from '@apphost/runtime';
import { KeyRing } from '../keys/key-ring';
import { RegistryStoreAccess } from '../store/store-access';
import type { BindingRow, ToolsetRow } from '../store/toolsets.repository';
import type { RegistryFaultPoint } from '../registry.faults';
import { REGISTRY_CONFIG } from '../registry.tokens';
import type { RegistryConfig } from '../registry.config';
import { BINDING_REVISION_PURPOSE, bindingDigest } from './fingerprint';
import { probeProviders } from './readiness';
import { BindingStateWaiter } from './binding-state-waiter';
import { GenerationFanout } from '../generations/generation-fanout';

const MATERIALIZE_WAIT_MS = 10_000;

/**
 * Binding generations: UNMATERIALIZED → MATERIALIZING → PROFILE_BOUND | MODEL_ONLY → REVOKING → CLOSED, every
 * step a compare-and-set in PostgreSQL, so the latch holds across replicas.
 */
@Injectable()
export class BindingService {
  constructor(
    private readonly store: RegistryStoreAccess,
    private readonly bus: BusClient,
    private readonly keys: KeyRing,
    private readonly fanout: GenerationFanout,
    private readonly waiter: BindingStateWaiter,
    @Inject(REGISTRY_CONFIG) private readonly config: RegistryConfig,
    @Inject(FAULT_POINTS) private readonly faults: FaultPoints<RegistryFaultPoint>,
  ) {}

  async toolset(toolsetId: string): Promise<ToolsetRow> {
    const toolset = await this.store.toolsets.get(toolsetId);
    if (!toolset) throw toolsetNotFound(toolsetId);
    return toolset;
  }

  /**
   * The current binding generation, materialized (at most one construction at a time, whoever asks first). A
   * constructor that died holds an expiring lease; a waiter that finds it expired takes the construction over.
   */
  async materialized(toolsetId: string): Promise<{ toolset: ToolsetRow; binding: BindingRow; profile: HostProfile | undefined }> {
    // The common case first: the current generation is already materialized. One read (toolset, binding, profile)
    // decides it; only a binding that is not final takes the construction path (whose CAS could not win against a
    // final state anyway).
    const current = await this.store.toolsets.current(toolsetId);
    if (!current) throw toolsetNotFound(toolsetId);
    const state = current.binding?.state;
    if (current.binding && (state === 'PROFILE_BOUND' || state === 'MODEL_ONLY')) return { ...current, binding: current.binding };
    if (current.binding && (state === 'REVOKING' || state === 'CLOSED')) throw closedError(toolsetId, current.binding.generation, current.binding.state);
    const { toolset } = current;
    const binding = await this.construction(toolset);
    const profile = toolset.profileId ? await this.store.profiles.get(toolset.profileId) : undefined;
    return { toolset, binding, profile };
  }

  private async construction(toolset: ToolsetRow): Promise<BindingRow> {
    const toolsetId = toolset.toolsetId;
    const generation = toolset.currentGeneration;
    // Whoever builds may be another replica: wait for its state change (notified), re-reading at a bounded interval.
    const deadline = Date.now() + MATERIALIZE_WAIT_MS;
    for (;;) {
      await this.constructIfLeased(toolset, generation);
      const { changed } = await this.waiter.nextChange(toolsetId, generation, deadline - Date.now());
      const binding = await this.binding(toolsetId, generation);
      if (binding.state === 'PROFILE_BOUND' || binding.state === 'MODEL_ONLY') return binding;
      if (binding.state === 'REVOKING' || binding.state === 'CLOSED') throw closedError(toolsetId, generation, binding.state);
      if (Date.now() >= deadline)
        throw new AppHostError('UNAVAILABLE', `binding ${toolsetId}#${generation} is still materializing`, {
          details: RegistryReasons.details('BINDING_MATERIALIZING'),
        });
      await changed;
    }
  }

  /** Revokes the current binding generation: closes advertising connections, then REVOKING → CLOSED (once). */
  async revoke(toolsetId: string): Promise<ToolsetStatus> {
    const toolset = await this.toolset(toolsetId);
    await this.closeGeneration(toolsetId, toolset.currentGeneration, 'all');
    return this.status(toolsetId);
  }

  /**
   * Installs a new binding generation, under `profileId` when given (another stored, immutable profile: how a
   * policy is narrowed) or else the current one, and materializes it; the old one is revoked and never comes back.
   * An unknown profile is NOT_FOUND before anything changes.
   */
  async rebind(toolsetId: string, profileId?: string): Promise<ToolsetStatus> {
    const toolset = await this.toolset(toolsetId);
    if (profileId !== undefined && !(await this.store.profiles.get(profileId))) throw new AppHostError('NOT_FOUND', `profile ${profileId} does not exist`);
    const old = toolset.currentGeneration;
    if (!(await this.store.toolsets.installNextGeneration(toolsetId, old, profileId ?? toolset.profileId))) {
      throw new AppHostError('CONFLICT', `toolset ${toolsetId} was rebound concurrently`, { details: RegistryReasons.details('REBIND_RACE') });
    }
    // Advertising connections go now; model-only (non-advertising) ones drain and close at their last release.
    await this.closeGeneration(toolsetId, old, 'advertising');
    await this.materialized(toolsetId).catch((error: unknown) => {
      if (!(RegistryReasons.of(error) === 'BINDING_CLOSED')) throw error;
    });
    return this.status(toolsetId);
  }

  /** Reads only (it never materializes, as before): the toolset, its current binding and its live count, in one statement. */
  async status(toolsetId: string): Promise<ToolsetStatus> {
    const read = await this.store.toolsets.status(toolsetId);
    if (!read) throw toolsetNotFound(toolsetId);
    const { toolset, binding, liveConnections } = read;
    if (!binding) throw bindingNotFound(toolsetId, toolset.currentGeneration);
    return {
      toolsetId,
      profileId: toolset.profileId,
      state: binding.state,
      bindingGeneration: binding.generation,
      bindingRevision: binding.bindingRevision,
      readiness: binding.readiness,
      transport: toolset.spec.connection.kind,
      protocol: toolset.spec.protocol,
      liveConnections,
      requireConfirmation: toolset.spec.requireConfirmation ?? false,
      selection: { toolFilter: toolset.spec.toolFilter, namePrefix: toolset.spec.namePrefix, listCacheTtlMs: toolset.spec.listCacheTtlMs },
    };
  }

  /**
   * The verdict on `bindingRevision` and the current binding it was judged against, read in one statement (toolset,
   * profile, binding); refusals in the order they always had: unknown toolset, model-only toolset, unknown profile,
   * the key ring's (malformed, unknown or retired key), then a missing binding row.
   */
  async verifyRevision(toolsetId: string, bindingRevision: string): Promise<ResponseOf<typeof RegistryVerifyBindingRevision>> {
    const read = await this.store.toolsets.verifiable(toolsetId);
    if (!read) throw toolsetNotFound(toolsetId);
    const { profileId, profile, binding } = read;
    if (!profileId) throw new AppHostError('FAILED_PRECONDITION', `toolset ${toolsetId} has no profile`, { details: RegistryReasons.details('MODEL_ONLY') });
    if (!profile) throw new AppHostError('NOT_FOUND', `profile ${profileId} does not exist`);
    const verdict = await this.keys.verify(BINDING_REVISION_PURPOSE, bindingDigest(toolsetId, profileId, profile), bindingRevision);
    if (!binding) throw bindingNotFound(toolsetId, read.currentGeneration);
    const current = verdict.valid && binding.state === 'PROFILE_BOUND';
    return {
      ...verdict,
      current,
      binding: { profileId, state: binding.state, bindingGeneration: binding.generation, bindingRevision: binding.bindingRevision },
    };
  }

  private async closeGeneration(toolsetId: string, generation: number, scope: 'advertising' | 'all'): Promise<void> {
    const state = await this.store.toolsets.beginRevoke(toolsetId, generation);
    if (state) await this.waiter.changed(toolsetId, generation);
    if (state !== 'REVOKING') return; // CLOSED already (or closed before it was ever materialized)
    await this.fanout.closeBinding(toolsetId, generation, scope);
    await this.faults.hit('binding.before-finish-revoke');
    if (await this.store.toolsets.finishRevoke(toolsetId, generation)) await this.waiter.changed(toolsetId, generation);
  }

  /** Constructs iff this caller wins the construction lease (the first attempt, or a takeover of an expired one). */
  private async constructIfLeased(toolset: ToolsetRow, generation: number): Promise<void> {
    const token = randomUUID();
    if (!(await this.store.toolsets.beginMaterialize(toolset.toolsetId, generation, token, this.config.constructionLeaseMs))) return;
    try {
      await this.faults.hit('binding.after-begin-materialize');
      await this.construct(toolset, generation, token);
    } catch (error) {
      await this.store.toolsets.abandonMaterialize(toolset.toolsetId, generation, token).catch(() => undefined);
      throw error;
    } finally {
      await this.waiter.changed(toolset.toolsetId, generation);
    }
  }

  private async construct(toolset: ToolsetRow, generation: number, token: string): Promise<void> {
    if (!toolset.profileId) {
      await this.store.toolsets.finishMaterialize(toolset.toolsetId, generation, token, 'MODEL_ONLY', [], null);
      return;
    }
    const profile = await this.store.profiles.get(toolset.profileId);
    if (!profile) throw new AppHostError('NOT_FOUND', `profile ${toolset.profileId} does not exist`);
    const readiness = await probeProviders(this.bus, profile, this.config.providerTimeoutMs);
    const bound = readiness.every((r) => r.present);
    const revision = bound ? await this.keys.sign(BINDING_REVISION_PURPOSE, bindingDigest(toolset.toolsetId, toolset.profileId, profile)) : null;
    // False when a revocation arrived meanwhile (it owns the close) or the lease was taken over: nothing was handed out.
    await this.store.toolsets.finishMaterialize(toolset.toolsetId, generation, token, bound ? 'PROFILE_BOUND' : 'MODEL_ONLY', readiness, revision);
  }

  private async binding(toolsetId: string, generation: number): Promise<BindingRow> {
    const binding = await this.store.toolsets.binding(toolsetId, generation);
    if (!binding) throw bindingNotFound(toolsetId, generation);
    return binding;
  }
}

const toolsetNotFound = (toolsetId: string) => new AppHostError('NOT_FOUND', `toolset ${toolsetId} does not exist`);
const bindingNotFound = (toolsetId: string, generation: number) => new AppHostError('NOT_FOUND', `binding ${toolsetId}#${generation} does not exist`);

function closedError(toolsetId: string, generation: number, state: BindingState): AppHostError {
  return new AppHostError('FAILED_PRECONDITION', `binding ${toolsetId}#${generation} is ${state}`, {
    details: RegistryReasons.details('BINDING_CLOSED', { state, bindingGeneration: generation }),
  });
}
