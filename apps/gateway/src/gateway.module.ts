import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AdminController } from './admin/admin.controller';
import { CatalogController, ToolApprovalController } from './catalog/catalog.controller';
import { MessagesController } from './conversation/messages.controller';
import { ModelContextController } from './conversation/model-context.controller';
import { ExportsController } from './exports/exports.controller';
import { HttpErrorFilter } from './http/error.filter';
import { OpenApiController } from './openapi/openapi.controller';
import { PrincipalsController } from './principals/principals.controller';
import { ServicesController } from './services/services.controller';
import { SessionsController } from './sessions/sessions.controller';
import { ViewTokensController } from './sessions/view-tokens.controller';
import { ToolBatchesController } from './tool-batches/tool-batches.controller';
import { ViewRpcController } from './views/view-rpc.controller';
import { ViewsController } from './views/views.controller';

/** The gateway's own routes; the auth module (guards) is imported next to it by the service definition. */
@Module({})
export class GatewayModule {
  static register(): DynamicModule {
    return {
      module: GatewayModule,
      controllers: [
        OpenApiController,
        ServicesController,
        SessionsController,
        ViewTokensController,
        AdminController,
        PrincipalsController,
        CatalogController,
        ToolApprovalController,
        ToolBatchesController,
        ExportsController,
        ViewsController,
        ViewRpcController,
        ModelContextController,
        MessagesController,
      ],
      providers: [{ provide: APP_FILTER, useClass: HttpErrorFilter }],
    };
  }
}
