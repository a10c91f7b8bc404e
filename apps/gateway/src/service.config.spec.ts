import { describeServiceConfig } from '@apphost/testing';
import { gatewayService } from './service';

// The mode decides which variables apply: each mode's variables are checked under it.
describeServiceConfig(gatewayService, 'apps/gateway/src/main.ts', { AUTH_MODE: 'magic', GATEWAY_VIEW_TOKEN_SECRET: 'c2hvcnQ=' });
describeServiceConfig(gatewayService, 'apps/gateway/src/main.ts', {
  AUTH_ORIGIN_ALLOWLIST: 'ftp://files.example.com',
  GATEWAY_VIEW_TOKEN_SECRET: 'not base64!',
  GATEWAY_VIEW_RPC_TIMEOUT_MS: '50',
  APPHOST_SANDBOX_PORT: '99999',
  APPHOST_SANDBOX_ORIGIN: 'ftp://sandbox.example.com',
});
describeServiceConfig(
  gatewayService,
  'apps/gateway/src/main.ts',
  {
    AUTH_JWT_HS256_SECRET: 'too-short',
    AUTH_JWT_ALGORITHMS: 'none',
    AUTH_CLOCK_TOLERANCE_SECONDS: '999',
    AUTH_TENANT_CLAIM: 'not a claim!',
    AUTH_ORIGIN_ALLOWLIST: 'ftp://files.example.com',
    GATEWAY_VIEW_TOKEN_SECRET: 'c2hvcnQ=',
  },
  { AUTH_MODE: 'jwt', AUTH_JWT_ISSUER: 'https://issuer.example.com', AUTH_JWT_AUDIENCE: 'apphost', AUTH_JWT_HS256_SECRET: 'x'.repeat(32) },
);
