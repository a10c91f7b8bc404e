import type { ServiceDefinition } from '@apphost/runtime';
import { AuthModule, parseAuthConfig } from './auth';
import { GatewayModule } from './gateway.module';

/** The only HTTP edge: authentication, the error envelope, and the v1 API. It keeps no state of its own. */
export const gatewayService: ServiceDefinition = {
  name: 'gateway',
  requires: [],
  defaultHttpPort: 8080,
  imports: async (context) => {
    const auth = await AuthModule.fromConfig(parseAuthConfig(context.env), { bindHost: context.config.HTTP_HOST });
    if (auth.developmentProvider) context.logger.warn({ tokenFile: auth.developmentProvider.tokenFile }, 'development authentication: local tokens only, loopback only');
    return [auth.module, GatewayModule.register()];
  },
};
