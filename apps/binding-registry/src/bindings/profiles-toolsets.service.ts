import { Inject, Injectable } from '@nestjs/common';
import { canonicalDigest } from '@apphost/canonical-json';
import { AppHostError, RegistryReasons, type HostProfile, type ToolsetSpec, type ToolsetStatus } from '@apphost/contracts';
import { RegistryStoreAccess } from '../store/store-access';
import { REGISTRY_CONFIG } from '../registry.tokens';
import type { RegistryConfig } from '../registry.config';
import { stdioAllowed, stdioRefused } from '../generations/target';
import { BindingService } from './binding.service';
import { fingerprintSubset } from './fingerprint';

/** Profiles and toolset specs: validated, immutable once stored (a change is a new id). */
@Injectable()
export class ProfilesToolsetsService {
  constructor(
    private readonly store: RegistryStoreAccess,
    private readonly bindings: BindingService,
    @Inject(REGISTRY_CONFIG) private readonly config: RegistryConfig,
  ) {}

  async putProfile(profileId: string, profile: HostProfile): Promise<{ profileId: string; created: boolean; fingerprint: string }> {
    const outcome = await this.store.profiles.put(profileId, profile, canonicalDigest('binding-revision', { profile }));
    if (outcome.kind === 'conflict')
      throw new AppHostError('CONFLICT', `profile ${profileId} exists with other content; profiles are immutable (use a new id)`, {
        details: RegistryReasons.details('PROFILE_IMMUTABLE'),
      });
    return { profileId, created: outcome.kind === 'created', fingerprint: canonicalDigest('binding-revision', fingerprintSubset(profile)) };
  }

  getProfile(profileId: string): Promise<HostProfile | undefined> {
    return this.store.profiles.get(profileId);
  }

  async putToolset(toolsetId: string, spec: ToolsetSpec): Promise<{ created: boolean; status: ToolsetStatus }> {
    if (spec.connection.kind === 'stdio' && !stdioAllowed(spec.connection, this.config)) throw stdioRefused();
    if (spec.connection.kind === 'http') {
      for (const ref of Object.values(spec.connection.headers)) {
        if (!this.config.secrets.has(ref.secretRef))
          throw new AppHostError('INVALID_ARGUMENT', `secret ${ref.secretRef} is not configured`, { details: RegistryReasons.details('SECRET_MISSING') });
      }
    }
    if (spec.profileId && !(await this.store.profiles.get(spec.profileId))) throw new AppHostError('NOT_FOUND', `profile ${spec.profileId} does not exist`);
    const outcome = await this.store.toolsets.put(toolsetId, spec, canonicalDigest('binding-revision', { spec }));
    if (outcome.kind === 'conflict')
      throw new AppHostError('CONFLICT', `toolset ${toolsetId} exists with another spec; specs are immutable (use a new id)`, {
        details: RegistryReasons.details('TOOLSET_IMMUTABLE'),
      });
    await this.bindings.materialized(toolsetId).catch((error: unknown) => {
      if (!(RegistryReasons.of(error) === 'BINDING_CLOSED')) throw error;
    });
    return { created: outcome.kind === 'created', status: await this.bindings.status(toolsetId) };
  }
}
