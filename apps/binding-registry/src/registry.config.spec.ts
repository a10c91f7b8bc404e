import { randomBytes } from 'node:crypto';
import { AppHostError, toolsetSpecSchema } from '@apphost/contracts';
import { ConfigError } from '@apphost/runtime';
import { resolveTarget } from './generations/target';
import { parseRegistryConfig } from './registry.config';

describe('registry configuration', () => {
  it('defaults to refusing stdio, and parses the host key and secrets once', () => {
    const config = parseRegistryConfig({ REGISTRY_HOST_KEY: randomBytes(32).toString('base64'), REGISTRY_SECRETS: '{"token":"s3cret"}' });
    expect(config.allowStdio).toBe(false);
    expect(config.hostKey?.length).toBe(32);
    expect(config.secrets.get('token')).toBe('s3cret');
    expect(config.maxLiveGenerations).toBe(64);
    expect(parseRegistryConfig({ REGISTRY_MAX_LIVE_GENERATIONS: '3' }).maxLiveGenerations).toBe(3);
  });

  it('rejects bad settings at startup', () => {
    expect(() => parseRegistryConfig({ REGISTRY_ALLOW_STDIO: 'maybe' })).toThrow(ConfigError);
    expect(() => parseRegistryConfig({ REGISTRY_SECRETS: '[1]' })).toThrow(/REGISTRY_SECRETS/);
    expect(() => parseRegistryConfig({ REGISTRY_MAX_LIVE_GENERATIONS: '0' })).toThrow(/REGISTRY_MAX_LIVE_GENERATIONS/);
    expect(() => parseRegistryConfig({ REGISTRY_HOST_KEY: 'c2hvcnQ=c2hvcnQ=c2hvcnQ=c2hvcnQ=c2hvcnQ=c2hvcnQ=' })).toThrow(/32 bytes/);
    // A construction lease that a construction's own provider probes could outlast would be taken over mid-run.
    expect(() => parseRegistryConfig({ REGISTRY_CONSTRUCTION_LEASE_MS: '1000', REGISTRY_PROVIDER_TIMEOUT_MS: '1500' })).toThrow(
      /REGISTRY_CONSTRUCTION_LEASE_MS/,
    );
    expect(parseRegistryConfig({}).constructionLeaseMs).toBe(5000);
  });
});

describe('resolveTarget', () => {
  const stdio = toolsetSpecSchema.parse({ connection: { kind: 'stdio', command: '/bin/true' }, profileId: null });
  const http = toolsetSpecSchema.parse({
    connection: { kind: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: { secretRef: 'token' } } },
    profileId: null,
  });

  it('refuses stdio specs unless the deployment allows them', () => {
    const refused = (() => {
      try {
        resolveTarget(stdio, parseRegistryConfig({}));
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(AppHostError);
    expect(refused).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'STDIO_NOT_ALLOWED' } });
    expect(resolveTarget(stdio, parseRegistryConfig({ REGISTRY_ALLOW_STDIO: 'true' }))).toMatchObject({ kind: 'stdio', command: '/bin/true' });
  });

  it('resolves header references from configured secrets only; the spec never holds the value', () => {
    expect(JSON.stringify(http)).not.toContain('s3cret');
    expect(resolveTarget(http, parseRegistryConfig({ REGISTRY_SECRETS: '{"token":"s3cret"}' }))).toEqual({
      kind: 'http',
      url: 'https://mcp.example.com/mcp',
      headers: { Authorization: 's3cret' },
    });
    expect(() => resolveTarget(http, parseRegistryConfig({}))).toThrow(/secret token is not configured/);
  });
});
