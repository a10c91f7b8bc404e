import net from 'node:net';

/**
 * A minimal loopback TCP proxy in front of the shared PostgreSQL, so a suite can cut this registry's link without
 * touching the server. Same shape as `startTcpProxy` of `@apphost/testing` (cut/resume/close), which replaces it
 * once both are on one branch.
 */
export interface PgLink {
  readonly port: number;
  /** Destroys every live connection and refuses new ones until `resume()`: PostgreSQL is unreachable. */
  cut(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startPgLink(targetHost: string, targetPort: number): Promise<PgLink> {
  const sockets = new Set<net.Socket>();
  let cut = false;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    track(client);
    if (cut) return void client.resetAndDestroy();
    const upstream = net.connect(targetPort, targetHost);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut: () => {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    resume: () => {
      cut = false;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
