import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type { AuthConfig } from './auth.config';
import { AuthGuard } from './auth.guard';
import { DevelopmentTokenProvider } from './development-token-provider';
import { ORIGIN_ALLOWLIST, OriginGuard } from './origin.guard';
import { TokenVerifier } from './token-verifier';

@Module({})
export class AuthModule {
  /** Registers the origin guard, then the auth guard (cheap rejection first), for every route of the app. */
  static forRoot(verifier: TokenVerifier, originAllowlist: string[]): DynamicModule {
    return {
      module: AuthModule,
      global: true,
      providers: [
        { provide: TokenVerifier, useValue: verifier },
        { provide: ORIGIN_ALLOWLIST, useValue: [...originAllowlist] },
        { provide: APP_GUARD, useClass: OriginGuard },
        { provide: APP_GUARD, useClass: AuthGuard },
      ],
      exports: [TokenVerifier, ORIGIN_ALLOWLIST],
    };
  }

  /**
   * Builds the module from parsed config. Development mode mints its token file here and refuses a
   * non-loopback bindHost; the provider is returned so the caller can log where the token went.
   */
  static async fromConfig(
    config: AuthConfig,
    options: { bindHost: string },
  ): Promise<{ module: DynamicModule; verifier: TokenVerifier; developmentProvider?: DevelopmentTokenProvider }> {
    if (config.mode === 'jwt') {
      const verifier = TokenVerifier.fromConfig(config);
      return { module: AuthModule.forRoot(verifier, config.originAllowlist), verifier };
    }
    const developmentProvider = await DevelopmentTokenProvider.create({ bindHost: options.bindHost, tokenFile: config.devTokenFile });
    const verifier = developmentProvider.verifier;
    return { module: AuthModule.forRoot(verifier, config.originAllowlist), verifier, developmentProvider };
  }
}
