import type { Server } from 'node:http';
import { config } from '../config.js';
import { logger } from '../logger.js';
import { createApp } from './app.js';
import type { Host } from './route.js';

export interface RunningServers {
  urls: Record<Host, string>;
  close(): Promise<void>;
}

function listen(host: Host, port: number, bind: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createApp(host).listen(port, bind, () => resolve(server));
    server.once('error', reject);
  });
}

/** Starts the api, read and write listeners (port 0 picks a free port, for tests). */
export async function startServers(ports = config().ports, bind = config().host): Promise<RunningServers> {
  const hosts: Host[] = ['api', 'read', 'write'];
  const servers = await Promise.all(hosts.map((host) => listen(host, ports[host], bind)));
  const urls = Object.fromEntries(
    hosts.map((host, index) => {
      const address = servers[index].address();
      const port = typeof address === 'object' && address ? address.port : ports[host];
      return [host, `http://${bind === '0.0.0.0' ? 'localhost' : bind}:${port}/v1`];
    }),
  ) as Record<Host, string>;
  logger.info(urls, 'listening');
  return {
    urls,
    async close() {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeAllConnections();
            }),
        ),
      );
    },
  };
}
