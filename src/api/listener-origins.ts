import type { Context } from 'koa';
import type { Config } from '../config.js';
import type { Host } from './route.js';

export type Listener = Host | 'proxy';
export const listeners: Listener[] = ['api', 'read', 'write', 'search', 'proxy'];

/** The ports the listeners actually bound (port 0 picks one), filled in by `startServers`. */
export type ListenerPorts = Partial<Record<Listener, number>>;

/**
 * Where a browser reaches each listener, as seen from the request it made to `host`: a configured
 * public URL (`FERRY_PUBLIC_*_URL`) when there is one, else the host name it used with each
 * listener's own port. The API reference's try-it and the console both call what this names.
 */
export function listenerOrigins(
  ctx: Context,
  host: Host,
  ports: ListenerPorts,
  settings: Pick<Config, 'ports' | 'publicHostUrls'>,
): Record<Listener, string> {
  const port = (listener: Listener) => ports[listener] ?? settings.ports[listener];
  // The Host header ends up in a header (CSP) and in documents: anything but a plain name is ignored.
  const plain =
    /^([\w.-]+|\[[\d:a-f.]+\])(:\d+)?$/i.test(ctx.host) &&
    // Shaped like a host but none (`[:::]`, a port past 65535): Koa reads no host name from it.
    ctx.hostname !== '' &&
    URL.canParse(`http://${ctx.host}`);
  const hostname = plain ? ctx.hostname : 'localhost';
  const own = plain ? ctx.host : `localhost:${port(host)}`;
  const configured = settings.publicHostUrls as Partial<Record<Listener, string>>;
  return Object.fromEntries(
    listeners.map((listener) => {
      const publicUrl = listener === host ? undefined : configured[listener];
      if (publicUrl) return [listener, new URL(publicUrl).origin];
      return [listener, `${ctx.protocol}://${listener === host ? own : `${hostname}:${port(listener)}`}`];
    }),
  ) as Record<Listener, string>;
}
