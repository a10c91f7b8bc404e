import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { eventually, freePort } from '@apphost/testing';

/** A server of this suite alone (Redis or NATS) on a fixed loopback port, so it can be stopped and started again. */
export class PrivateServer {
  private child?: ChildProcess;

  private constructor(
    readonly name: string,
    readonly port: number,
    private readonly argv: string[],
  ) {}

  static async redis(): Promise<PrivateServer> {
    const port = await freePort();
    return PrivateServer.started('redis', port, ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  }

  static async nats(): Promise<PrivateServer> {
    const port = await freePort();
    const store = fs.mkdtempSync(path.join(os.tmpdir(), 'apphost-faults-js-'));
    return PrivateServer.started('nats', port, ['/usr/sbin/nats-server', '-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store]);
  }

  private static async started(name: string, port: number, argv: string[]): Promise<PrivateServer> {
    const server = new PrivateServer(name, port, argv);
    await server.start();
    return server;
  }

  get url(): string {
    return `${this.name === 'redis' ? 'redis' : 'nats'}://127.0.0.1:${this.port}`;
  }

  /** Starts the server and waits until its port accepts connections (bounded). */
  async start(): Promise<void> {
    const [command, ...args] = this.argv;
    this.child = spawn(command, args, { stdio: 'ignore' });
    await eventually(() => accepts(this.port), 10_000, 50);
  }

  /** Stops it the way an orderly shutdown does (SIGTERM), or dead (`SIGKILL`). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
