import { defineService } from '@apphost/runtime';
import { AuthModule } from './auth';
import { gatewayConfig, VIEW_RPC_MAX_BODY_BYTES } from './gateway.config';
import { VIEW_RPC_ROUTE, viewRpcBodyParser } from './views/view-rpc.body';
import { GatewayModule } from './gateway.module';
import { loadHostAssets } from './host/host-bundle';
import { HostModule } from './host/host.module';

/** The only HTTP edge: authentication, the error envelope, and the v1 API. It keeps no state of its own. */
export const gatewayService = defineService({
  name: 'gateway',
  requires: [],
  // Ready only while every service a route forwards to answers (sealed-result-store is reached only through them).
  routesTo: ['binding-registry', 'catalog-policy', 'lifecycle-store', 'governed-operations', 'export-audit'],
  defaultHttpPort: 8080,
  config: gatewayConfig,
  imports: async (context) => {
    const auth = await AuthModule.fromConfig(context.config.auth, { bindHost: context.config.HTTP_HOST, viewTokenSecret: context.config.viewTokenSecret });
    if (auth.developmentProvider)
      context.logger.warn({ tokenFile: auth.developmentProvider.tokenFile }, 'development authentication: local tokens only, loopback only');
    if (auth.viewTokens.ephemeral)
      context.logger.warn('GATEWAY_VIEW_TOKEN_SECRET is unset: view tokens use a random per-process key, so no other gateway replica accepts them');
    const hostPage = HostModule.register({
      settings: context.config.hostPage,
      assets: await loadHostAssets(),
      bindHost: context.config.HTTP_HOST,
      gatewayPort: context.config.HTTP_PORT,
      originAllowlist: context.config.auth.originAllowlist,
      development: context.config.auth.mode === 'development',
      logger: context.logger,
    });
    return [auth.module, GatewayModule.register(), hostPage];
  },
  // Mounted before the JSON parser Nest adds at init: the View RPC reads its own body (up to the largest profile limit).
  configureHttp: (app) => app.use(VIEW_RPC_ROUTE, viewRpcBodyParser(VIEW_RPC_MAX_BODY_BYTES)),
});
