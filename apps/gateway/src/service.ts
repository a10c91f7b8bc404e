import { defineService } from '@apphost/runtime';
import { AuthModule, authConfig } from './auth';
import { GatewayModule } from './gateway.module';

/** The only HTTP edge: authentication, the error envelope, and the v1 API. It keeps no state of its own. */
export const gatewayService = defineService({
  name: 'gateway',
  requires: [],
  defaultHttpPort: 8080,
  config: authConfig,
  imports: async (context) => {
    const auth = await AuthModule.fromConfig(context.config.auth, { bindHost: context.config.HTTP_HOST });
    if (auth.developmentProvider)
      context.logger.warn({ tokenFile: auth.developmentProvider.tokenFile }, 'development authentication: local tokens only, loopback only');
    return [auth.module, GatewayModule.register()];
  },
});
