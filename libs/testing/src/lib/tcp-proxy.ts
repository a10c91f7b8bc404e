import net from 'node:net';

/** A loopback TCP proxy in front of a real server, so a test can fault the link without touching the server. */
export interface TcpProxy {
  /** The loopback port clients connect to instead of the target's. */
  readonly port: number;
  /** Destroys every live connection and refuses new ones (RST) until `resume()`: a crash or a failover. */
  cut(): void;
  /** Stops forwarding bytes both ways, sockets stay open and new ones are accepted: a hung server. */
  pause(): void;
  /** Forwards again and accepts again after `cut()` or `pause()`. */
  resume(): void;
  /** Destroys every connection and stops listening. */
  close(): Promise<void>;
  /** How many client connections are open right now. */
  connections(): number;
}

interface Link {
  client: net.Socket;
  upstream: net.Socket;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const links = new Set<Link>();
  let mode: 'forwarding' | 'cut' | 'paused' = 'forwarding';

  const destroy = (link: Link) => {
    link.client.destroy();
    link.upstream.destroy();
    links.delete(link);
  };
  const setFlowing = (flowing: boolean) => {
    for (const { client, upstream } of links) {
      if (flowing) {
        client.resume();
        upstream.resume();
      } else {
        client.pause();
        upstream.pause();
      }
    }
  };

  const server = net.createServer((client) => {
    if (mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(targetPort, targetHost);
    const link: Link = { client, upstream };
    links.add(link);
    client.pipe(upstream);
    upstream.pipe(client);
    // Either side going away takes the other with it, as a dropped connection would.
    for (const socket of [client, upstream]) {
      socket.on('error', () => destroy(link));
      socket.on('close', () => destroy(link));
    }
    if (mode === 'paused') {
      client.pause();
      upstream.pause();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('tcp proxy has no address');

  return {
    port: address.port,
    cut() {
      mode = 'cut';
      for (const link of [...links]) {
        link.client.resetAndDestroy();
        destroy(link);
      }
    },
    pause() {
      mode = 'paused';
      setFlowing(false);
    },
    resume() {
      mode = 'forwarding';
      setFlowing(true);
    },
    async close() {
      for (const link of [...links]) destroy(link);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    connections: () => links.size,
  };
}
