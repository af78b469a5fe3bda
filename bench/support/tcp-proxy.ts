import { createServer, connect, type Server, type Socket } from 'node:net';
import { freePort } from './free-port.js';

/**
 * A TCP proxy in this process between Ferry and a server, which the soak can cut: `cut` stops
 * listening and destroys every open connection (Ferry sees resets, then refusals), `resume` listens
 * on the same port again. It lets the soak take stock of a server with nothing in flight before it
 * restarts the server (moto keeps its state in memory only).
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const listening = createServer((client) => {
        const upstream = connect(targetPort, '127.0.0.1');
        track(client);
        track(upstream);
        client.pipe(upstream).pipe(client);
        client.once('close', () => upstream.destroy());
        upstream.once('close', () => client.destroy());
      });
      listening.once('error', reject);
      listening.listen(port, '127.0.0.1', () => resolve());
      server = listening;
    });
  const cut = async () => {
    const closing = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (closing) await new Promise((resolve) => closing.close(resolve));
  };
  await listen();
  return { port, cut, resume: listen, close: cut };
}
