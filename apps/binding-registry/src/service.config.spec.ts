import { describeServiceConfig, variablesOf } from '@apphost/testing';
import { registryConfig } from './registry.config';
import { bindingRegistryService } from './service';

/** A bad value of each of the service's own variables. */
const BAD: Record<string, string> = {
  REGISTRY_ALLOW_STDIO: 'maybe',
  REGISTRY_HOST_KEY: 'short',
  REGISTRY_KEY_VERIFY_WINDOW_MS: '-1',
  REGISTRY_INSTANCE_LEASE_MS: '5',
  REGISTRY_CONSTRUCTION_LEASE_MS: '60000',
  REGISTRY_CONNECT_TIMEOUT_MS: 'soon',
  REGISTRY_MAX_LIVE_GENERATIONS: '0',
  REGISTRY_PROVIDER_TIMEOUT_MS: '1',
  REGISTRY_SECRETS: '[1]',
  REGISTRY_STDIO_ALLOWLIST: '[{"command":""}]',
};

it('covers every variable of the service schema', () => {
  expect(Object.keys(BAD).sort()).toEqual(variablesOf(registryConfig));
});

describeServiceConfig(bindingRegistryService, 'apps/binding-registry/src/main.ts', BAD);
