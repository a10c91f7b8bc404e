import { Body, Controller, Get, HttpCode, Inject, Param, Post, Put } from '@nestjs/common';
import type { z } from 'zod';
import { BusClient } from '@apphost/bus';
import {
  invalidArgument,
  RegistryGetToolset,
  RegistryPutProfile,
  RegistryPutToolset,
  RegistryRebindToolset,
  RegistryRevokeToolset,
  RegistryRotateKeys,
  type ResponseOf,
} from '@apphost/contracts';
import { RequireScopes } from '../auth';
import { profileBodySchema, registryIdParamSchema, toolsetBodySchema, toolsetMethodSchema } from './admin.schemas';

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidArgument(what, result.error);
  return result.data;
}

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
    return this.bus.request(RegistryPutProfile, { profileId: parse(registryIdParamSchema, profileId, 'profile id'), profile: parse(profileBodySchema, body, 'profile') });
  }

  @Put('toolsets/:toolsetId')
  putToolset(@Param('toolsetId') toolsetId: string, @Body() body: unknown): Promise<ResponseOf<typeof RegistryPutToolset>> {
    return this.bus.request(RegistryPutToolset, { toolsetId: parse(registryIdParamSchema, toolsetId, 'toolset id'), spec: parse(toolsetBodySchema, body, 'toolset spec') });
  }

  @Get('toolsets/:toolsetId')
  getToolset(@Param('toolsetId') toolsetId: string): Promise<ResponseOf<typeof RegistryGetToolset>> {
    return this.bus.request(RegistryGetToolset, { toolsetId: parse(registryIdParamSchema, toolsetId, 'toolset id') });
  }

  /** `:revoke` and `:rebind` arrive in the same path segment as the id. */
  @Post('toolsets/:toolsetId')
  @HttpCode(200)
  toolsetMethod(@Param('toolsetId') segment: string): Promise<ResponseOf<typeof RegistryRevokeToolset>> {
    const [toolsetId, method] = parse(toolsetMethodSchema, segment, 'toolset custom method').split(':');
    return this.bus.request(method === 'revoke' ? RegistryRevokeToolset : RegistryRebindToolset, { toolsetId });
  }

  @Post('keys\\:rotate')
  @HttpCode(200)
  rotateKeys(): Promise<ResponseOf<typeof RegistryRotateKeys>> {
    return this.bus.request(RegistryRotateKeys, {});
  }
}
