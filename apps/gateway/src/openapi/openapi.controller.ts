import { Controller, Get } from '@nestjs/common';
import { Public } from '@apphost/runtime';
import { buildOpenApiDocument } from './openapi.document';

@Public()
@Controller('v1/openapi.json')
export class OpenApiController {
  private readonly document = buildOpenApiDocument();

  @Get()
  get(): Record<string, unknown> {
    return this.document;
  }
}
