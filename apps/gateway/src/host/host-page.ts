import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ownLoopbackOrigins } from '../auth/origin.guard';
import type { HostAssets } from './host-bundle';
import type { HostPageSettings } from './host.config';
import { SandboxServer } from './sandbox-server';

export const HOST_PAGE = Symbol('HOST_PAGE');

/** What the host page reads at `/host/config.json`: where its sandbox is and which apps to offer. */
export interface HostPageConfig {
  sandboxOrigin: string;
  apps: string[];
}

export interface HostPageOptions {
  settings: HostPageSettings;
  assets: HostAssets;
  /** The gateway's bind address and configured port (the sandbox's defaults derive from them). */
  bindHost: string;
  gatewayPort: number;
  /** The browser-route origin allowlist: the origins that may embed Views. */
  originAllowlist: string[];
  /** Development: the gateway's own loopback origin may embed Views too, and loopback origins may be in a View CSP. */
  development: boolean;
  logger: { warn(obj: object, msg: string): void };
}

/**
 * The reference web host: its assets, and the sandbox listener on the second origin. The gateway's own HTTP server
 * is read once it listens (its bound port is what the own-origin rule of development compares with).
 */
export class HostPage {
  private readonly sandbox: SandboxServer;
  private sandboxPort: number | undefined;
  private gatewayServer: Server | undefined;

  constructor(private readonly options: HostPageOptions) {
    this.sandbox = new SandboxServer({
      proxyJs: options.assets.proxyJs,
      development: options.development,
      isHostOrigin: (origin) => this.isHostOrigin(origin),
    });
  }

  get assets(): HostAssets {
    return this.options.assets;
  }

  async start(gatewayServer: Server): Promise<void> {
    this.gatewayServer = gatewayServer;
    const { settings, gatewayPort, development, bindHost } = this.options;
    if (settings.sandboxPort !== undefined) {
      this.sandboxPort = await this.sandbox.listen(settings.sandboxPort, bindHost);
      return;
    }
    // Development defaults to the next port (predictable for a person); a taken one falls back to a free one, which
    // /host/config.json reports. Elsewhere an unconfigured sandbox takes a free port (deployments set the port).
    const preferred = development && gatewayPort !== 0 ? gatewayPort + 1 : 0;
    try {
      this.sandboxPort = await this.sandbox.listen(preferred, bindHost);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || preferred === 0) throw error;
      this.sandboxPort = await this.sandbox.listen(0, bindHost);
      this.options.logger.warn({ preferred, port: this.sandboxPort }, "the sandbox port after the gateway's is taken: the sandbox listens on a free one");
    }
  }

  stop(): Promise<void> {
    return this.sandbox.close();
  }

  config(): HostPageConfig {
    return { sandboxOrigin: this.sandboxOrigin(), apps: this.options.settings.apps };
  }

  sandboxOrigin(): string {
    if (this.options.settings.sandboxOrigin) return this.options.settings.sandboxOrigin;
    if (this.sandboxPort === undefined) throw new Error('the sandbox listener has not started');
    const host = ['0.0.0.0', '::', ''].includes(this.options.bindHost)
      ? '127.0.0.1'
      : this.options.bindHost.includes(':')
        ? `[${this.options.bindHost}]`
        : this.options.bindHost;
    return `http://${host}:${this.sandboxPort}`;
  }

  private isHostOrigin(origin: string): boolean {
    if (this.options.originAllowlist.includes(origin)) return true;
    const address = this.gatewayServer?.address() as AddressInfo | null | undefined;
    return this.options.development && !!address && ownLoopbackOrigins(address.port).includes(origin);
  }
}
