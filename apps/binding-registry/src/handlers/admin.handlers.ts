import { Injectable } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import {
  AppHostError,
  RegistryAcquireGeneration,
  RegistryDiscoverToolset,
  RegistryGetProfile,
  RegistryGetToolset,
  RegistryPutProfile,
  RegistryPutToolset,
  RegistryRebindToolset,
  RegistryRevokeToolset,
  RegistryRotateKeys,
  RegistryVerifyBindingRevision,
  type ParsedRequestOf,
  type ResponseOf,
} from '@apphost/contracts';
import { BindingService } from '../bindings/binding.service';
import { ProfilesToolsetsService } from '../bindings/profiles-toolsets.service';
import { GenerationService } from '../generations/generation.service';
import { KeyRing } from '../keys/key-ring';

/** The registry's service-level operations: any replica serves them (queue group `binding-registry`). */
@Injectable()
export class AdminHandlers {
  constructor(
    private readonly profilesToolsets: ProfilesToolsetsService,
    private readonly bindings: BindingService,
    private readonly generations: GenerationService,
    private readonly keys: KeyRing,
  ) {}

  @BusHandler(RegistryPutProfile)
  putProfile(r: ParsedRequestOf<typeof RegistryPutProfile>): Promise<ResponseOf<typeof RegistryPutProfile>> {
    return this.profilesToolsets.putProfile(r.profileId, r.profile);
  }

  @BusHandler(RegistryPutToolset)
  putToolset(r: ParsedRequestOf<typeof RegistryPutToolset>): Promise<ResponseOf<typeof RegistryPutToolset>> {
    return this.profilesToolsets.putToolset(r.toolsetId, r.spec);
  }

  @BusHandler(RegistryGetProfile)
  async getProfile(r: ParsedRequestOf<typeof RegistryGetProfile>): Promise<ResponseOf<typeof RegistryGetProfile>> {
    const profile = await this.profilesToolsets.getProfile(r.profileId);
    if (!profile) throw new AppHostError('NOT_FOUND', `profile ${r.profileId} does not exist`);
    return { profileId: r.profileId, profile };
  }

  @BusHandler(RegistryGetToolset)
  getToolset(r: ParsedRequestOf<typeof RegistryGetToolset>): Promise<ResponseOf<typeof RegistryGetToolset>> {
    return this.bindings.status(r.toolsetId);
  }

  @BusHandler(RegistryRevokeToolset)
  revoke(r: ParsedRequestOf<typeof RegistryRevokeToolset>): Promise<ResponseOf<typeof RegistryRevokeToolset>> {
    return this.bindings.revoke(r.toolsetId);
  }

  @BusHandler(RegistryRebindToolset)
  rebind(r: ParsedRequestOf<typeof RegistryRebindToolset>): Promise<ResponseOf<typeof RegistryRebindToolset>> {
    return this.bindings.rebind(r.toolsetId, r.profileId);
  }

  @BusHandler(RegistryRotateKeys)
  rotate(): Promise<ResponseOf<typeof RegistryRotateKeys>> {
    return this.keys.rotate();
  }

  @BusHandler(RegistryVerifyBindingRevision)
  verify(r: ParsedRequestOf<typeof RegistryVerifyBindingRevision>): Promise<ResponseOf<typeof RegistryVerifyBindingRevision>> {
    return this.bindings.verifyRevision(r.toolsetId, r.bindingRevision);
  }

  @BusHandler(RegistryAcquireGeneration)
  acquire(r: ParsedRequestOf<typeof RegistryAcquireGeneration>): Promise<ResponseOf<typeof RegistryAcquireGeneration>> {
    return this.generations.acquire(r);
  }

  @BusHandler(RegistryDiscoverToolset)
  discover(r: ParsedRequestOf<typeof RegistryDiscoverToolset>): Promise<ResponseOf<typeof RegistryDiscoverToolset>> {
    return this.generations.discover(r);
  }
}
