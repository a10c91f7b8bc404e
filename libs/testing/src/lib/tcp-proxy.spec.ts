import net from 'node:net';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';

jest.setTimeout(10_000);

/** One round trip through the proxy: resolves with the echoed text, or rejects with the socket's error or close. */
function roundTrip(port: number, text: string, timeoutMs = 1000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('timed out'));
    }, timeoutMs);
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.once('close', () => {
      clearTimeout(timer);
      reject(new Error('closed'));
    });
    socket.once('data', (data) => {
      clearTimeout(timer);
      socket.removeAllListeners('close');
      socket.destroy();
      resolve(data.toString());
    });
    socket.write(text);
  });
}

describe('startTcpProxy', () => {
  let echo: net.Server;
  let proxy: TcpProxy;

  beforeEach(async () => {
    echo = net.createServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    proxy = await startTcpProxy('127.0.0.1', (echo.address() as net.AddressInfo).port);
  });

  afterEach(async () => {
    await proxy.close();
    await new Promise((resolve) => echo.close(resolve));
  });

  it('forwards bytes both ways', async () => {
    await expect(roundTrip(proxy.port, 'hello')).resolves.toBe('hello');
  });

  it('cut destroys live connections and refuses new ones until resume', async () => {
    const live = net.connect(proxy.port, '127.0.0.1');
    const closed = new Promise<void>((resolve) => live.once('close', () => resolve()));
    live.on('error', () => undefined);
    await new Promise((resolve) => live.once('connect', resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(proxy.connections()).toBe(1);

    proxy.cut();
    await closed;
    expect(proxy.connections()).toBe(0);
    await expect(roundTrip(proxy.port, 'refused')).rejects.toThrow(/ECONNRESET|closed/);

    proxy.resume();
    await expect(roundTrip(proxy.port, 'back')).resolves.toBe('back');
  });

  it('pause keeps sockets open but forwards nothing; resume delivers what waited', async () => {
    proxy.pause();
    await expect(roundTrip(proxy.port, 'held', 200)).rejects.toThrow('timed out');

    const waiting = roundTrip(proxy.port, 'later', 2000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    proxy.resume();
    await expect(waiting).resolves.toBe('later');
  });
});
