import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type { AuthConfig } from './auth.config';
import { AuthGuard } from './auth.guard';
import { DevelopmentTokenProvider } from './development-token-provider';
import { ALLOW_OWN_ORIGIN, ORIGIN_ALLOWLIST, OriginGuard } from './origin.guard';
import { TokenVerifier } from './token-verifier';
import { ViewTokens } from './view-tokens';

export interface AuthModuleOptions {
  /** Mints and verifies view tokens; default: a random per-process secret. */
  viewTokens?: ViewTokens;
  /** Development: the gateway's own loopback origin (any port it listens on) may call browser routes. */
  allowOwnOrigin?: boolean;
}

@Module({})
export class AuthModule {
  /** Registers the origin guard, then the auth guard (cheap rejection first), for every route of the app. */
  static forRoot(verifier: TokenVerifier, originAllowlist: string[], options: AuthModuleOptions = {}): DynamicModule {
    return {
      module: AuthModule,
      global: true,
      providers: [
        { provide: TokenVerifier, useValue: verifier },
        { provide: ViewTokens, useValue: options.viewTokens ?? new ViewTokens() },
        { provide: ORIGIN_ALLOWLIST, useValue: [...originAllowlist] },
        { provide: ALLOW_OWN_ORIGIN, useValue: options.allowOwnOrigin ?? false },
        { provide: APP_GUARD, useClass: OriginGuard },
        { provide: APP_GUARD, useClass: AuthGuard },
      ],
      exports: [TokenVerifier, ViewTokens, ORIGIN_ALLOWLIST],
    };
  }

  /**
   * Builds the module from parsed config. Development mode mints its token file here, refuses a non-loopback
   * bindHost and lets the gateway's own origin call browser routes; the provider and the view tokens are returned so
   * the caller can log where the token went and whether view tokens are per process.
   */
  static async fromConfig(
    config: AuthConfig,
    options: { bindHost: string; viewTokenSecret?: Uint8Array },
  ): Promise<{ module: DynamicModule; verifier: TokenVerifier; viewTokens: ViewTokens; developmentProvider?: DevelopmentTokenProvider }> {
    const viewTokens = new ViewTokens({ secret: options.viewTokenSecret });
    if (config.mode === 'jwt') {
      const verifier = TokenVerifier.fromConfig(config);
      return { module: AuthModule.forRoot(verifier, config.originAllowlist, { viewTokens }), verifier, viewTokens };
    }
    const developmentProvider = await DevelopmentTokenProvider.create({ bindHost: options.bindHost, tokenFile: config.devTokenFile });
    const verifier = developmentProvider.verifier;
    return {
      module: AuthModule.forRoot(verifier, config.originAllowlist, { viewTokens, allowOwnOrigin: true }),
      verifier,
      viewTokens,
      developmentProvider,
    };
  }
}
