import { Body, Controller, Get, HttpCode, Inject, Param, Post, Put } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import {
  RegistryGetToolset,
  RegistryPutProfile,
  RegistryPutToolset,
  RegistryRebindToolset,
  RegistryRevokeToolset,
  RegistryRotateKeys,
  type ResponseOf,
} from '@apphost/contracts';
import { RequireScopes } from '../auth';
import { parseInput } from '../http/request-input';
import { profileBodySchema, rebindBodySchema, registryIdParamSchema, toolsetBodySchema, toolsetMethodSchema } from './admin.schemas';

/**
 * The admin API of the binding registry (admin scope): host profiles, toolset specs, revocation, rebind and key
 * rotation. Every body is validated before anything reaches the registry; answers carry key ids, never key material.
 */
@Controller('v1')
@RequireScopes('admin')
export class AdminController {
  constructor(@Inject(BusClient) private readonly bus: BusClient) {}

  @Put('profiles/:profileId')
  putProfile(@Param('profileId') profileId: string, @Body() body: unknown): Promise<ResponseOf<typeof RegistryPutProfile>> {
    return this.bus.request(RegistryPutProfile, {
      profileId: parseInput(registryIdParamSchema, profileId, 'profile id'),
      profile: parseInput(profileBodySchema, body, 'profile'),
    });
  }

  @Put('toolsets/:toolsetId')
  putToolset(@Param('toolsetId') toolsetId: string, @Body() body: unknown): Promise<ResponseOf<typeof RegistryPutToolset>> {
    return this.bus.request(RegistryPutToolset, {
      toolsetId: parseInput(registryIdParamSchema, toolsetId, 'toolset id'),
      spec: parseInput(toolsetBodySchema, body, 'toolset spec'),
    });
  }

  @Get('toolsets/:toolsetId')
  getToolset(@Param('toolsetId') toolsetId: string): Promise<ResponseOf<typeof RegistryGetToolset>> {
    return this.bus.request(RegistryGetToolset, { toolsetId: parseInput(registryIdParamSchema, toolsetId, 'toolset id') });
  }

  /**
   * `:revoke` and `:rebind` arrive in the same path segment as the id. `:rebind` takes an optional body
   * `{ profileId? }` (another stored profile to bind to; absent or empty: the same profile).
   */
  @Post('toolsets/:toolsetId')
  @HttpCode(200)
  toolsetMethod(@Param('toolsetId') segment: string, @Body() body: unknown): Promise<ResponseOf<typeof RegistryRevokeToolset>> {
    const [toolsetId, method] = parseInput(toolsetMethodSchema, segment, 'toolset custom method').split(':');
    if (method === 'revoke') return this.bus.request(RegistryRevokeToolset, { toolsetId });
    return this.bus.request(RegistryRebindToolset, { toolsetId, ...parseInput(rebindBodySchema, body ?? {}, 'rebind body') });
  }

  @Post('keys\\:rotate')
  @HttpCode(200)
  rotateKeys(): Promise<ResponseOf<typeof RegistryRotateKeys>> {
    return this.bus.request(RegistryRotateKeys, {});
  }
}
