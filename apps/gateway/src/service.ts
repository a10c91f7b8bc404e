import { defineService } from '@apphost/runtime';
import { AuthModule, authConfig } from './auth';
import { GatewayModule } from './gateway.module';

/** The only HTTP edge: authentication, the error envelope, and the v1 API. It keeps no state of its own. */
export const gatewayService = defineService({
  name: 'gateway',
  requires: [],
  // Ready only while every service a route forwards to answers (sealed-result-store is reached only through them).
  routesTo: ['binding-registry', 'catalog-policy', 'lifecycle-store', 'governed-operations', 'export-audit'],
  defaultHttpPort: 8080,
  config: authConfig,
  imports: async (context) => {
    const auth = await AuthModule.fromConfig(context.config.auth, { bindHost: context.config.HTTP_HOST });
    if (auth.developmentProvider)
      context.logger.warn({ tokenFile: auth.developmentProvider.tokenFile }, 'development authentication: local tokens only, loopback only');
    return [auth.module, GatewayModule.register()];
  },
});
