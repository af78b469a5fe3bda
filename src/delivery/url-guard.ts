import { lookup as lookupCallback, type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { addressBytes, nonPublicReason, sameAddress } from './ip-ranges.js';

/**
 * SSRF protection for webhook destinations: a destination may only reach public internet
 * addresses. The URL is checked before sending (for a readable error), and the connection itself is
 * checked again at connect time, because DNS may answer differently a moment later (rebinding).
 */

export type DestinationUrlErrorCode =
  'invalid-url' | 'unsupported-scheme' | 'credentials-in-url' | 'non-public-address' | 'unresolvable';

/** A destination URL Ferry refuses to deliver to. The message is a human reason and never holds secrets. */
export class DestinationUrlError extends Error {
  override readonly name = 'DestinationUrlError';

  constructor(
    readonly code: DestinationUrlErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface DestinationPolicy {
  /** Deliver to loopback, private and link-local addresses too (FERRY_ALLOW_PRIVATE_DESTINATIONS, development). */
  allowPrivate: boolean;
  /** Single non-public addresses allowed even when `allowPrivate` is false, such as one internal receiver. */
  allowedAddresses?: readonly string[];
}

/** Resolves a host name to every address it has, as `dns.lookup` (the resolver connections use) answers. */
export type ResolveHost = (hostname: string) => Promise<string[]>;

const resolveWithSystem: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** The URL as it may appear in logs and errors: query strings and credentials often carry tokens. */
export function redactUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** Why `address` is refused under `policy`, or undefined when it may be reached. */
function refusalReason(address: string, policy: DestinationPolicy): string | undefined {
  if (policy.allowPrivate) return undefined;
  const reason = nonPublicReason(address);
  if (!reason) return undefined;
  if (policy.allowedAddresses?.some((allowed) => sameAddress(allowed, address))) return undefined;
  return reason;
}

function nonPublicError(host: string, address: string, reason: string): DestinationUrlError {
  const subject = host === address ? address : `${host} resolves to ${address}, which`;
  return new DestinationUrlError(
    'non-public-address',
    `${subject} is ${reason}; webhook destinations must be public internet addresses`,
  );
}

/** Throws DestinationUrlError when a connection to `address` (reached through `host`) is not allowed. */
export function assertDeliverableAddress(address: string, policy: DestinationPolicy, host = address): void {
  const reason = refusalReason(address, policy);
  if (reason) throw nonPublicError(host, address, reason);
}

/** `[::1]` → `::1`: URL keeps IPv6 literals in brackets. */
function bareHostname(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Checks that `url` is an http(s) URL whose host resolves only to addresses `policy` allows, and
 * returns it parsed. IP literals are judged without any network access.
 */
export async function assertDeliverableUrl(
  url: string | URL,
  policy: DestinationPolicy,
  resolve: ResolveHost = resolveWithSystem,
): Promise<URL> {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    throw new DestinationUrlError('invalid-url', 'the destination URL is not a valid absolute URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new DestinationUrlError(
      'unsupported-scheme',
      `the destination URL must use http or https, not ${parsed.protocol.replace(/:$/, '')}`,
    );
  }
  if (parsed.username || parsed.password) {
    throw new DestinationUrlError(
      'credentials-in-url',
      'the destination URL must not contain a user name or password; send credentials as destination headers',
    );
  }
  const host = bareHostname(parsed);
  if (!host) throw new DestinationUrlError('invalid-url', 'the destination URL has no host');
  // Port 0 is no port a server listens on: every delivery would fail.
  if (parsed.port === '0') throw new DestinationUrlError('invalid-url', 'the destination URL names port 0');
  if (policy.allowPrivate) return parsed;
  if (addressBytes(host)) {
    assertDeliverableAddress(host, policy);
    return parsed;
  }
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'lookup failed';
    throw new DestinationUrlError('unresolvable', `${host} could not be resolved (${code})`);
  }
  if (!addresses.length) throw new DestinationUrlError('unresolvable', `${host} has no addresses`);
  for (const address of addresses) assertDeliverableAddress(address, policy, host);
  return parsed;
}

/**
 * A `lookup` for `net.connect` that refuses a host name when any of its addresses is refused, so the
 * address a socket connects to is the one that was checked.
 */
export function guardedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname: string, options: LookupOptions, callback: (...args: never[]) => void) => {
    const reply = callback as unknown as (
      error: Error | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void;
    lookupCallback(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return reply(error, '');
      for (const { address } of addresses) {
        const reason = refusalReason(address, policy);
        if (reason) return reply(nonPublicError(hostname, address, reason), '');
      }
      if (!addresses.length) {
        return reply(new DestinationUrlError('unresolvable', `${hostname} has no addresses`), '');
      }
      if (options.all) return reply(null, addresses);
      reply(null, addresses[0].address, addresses[0].family);
    });
  };
}

/**
 * An undici dispatcher whose every new connection is checked: IP literals before connecting, host
 * names through `guardedLookup`, and the socket's actual peer address once connected.
 */
export function createGuardedAgent(policy: DestinationPolicy, connectTimeoutMs = 10_000): Agent {
  if (policy.allowPrivate) return new Agent({ connect: { timeout: connectTimeoutMs } });
  const connect = buildConnector({ timeout: connectTimeoutMs, lookup: guardedLookup(policy) });
  return new Agent({
    connect(options, callback) {
      const literal = addressBytes(options.hostname) ? options.hostname : undefined;
      const literalReason = literal && refusalReason(literal, policy);
      if (literal && literalReason) return callback(nonPublicError(literal, literal, literalReason), null);
      connect(options, (error, socket) => {
        if (error) return callback(error, null);
        const peer = socket!.remoteAddress;
        const peerReason = peer ? refusalReason(peer, policy) : 'an unknown address';
        if (peerReason) {
          socket!.destroy();
          return callback(nonPublicError(options.hostname, peer ?? 'unknown', peerReason), null);
        }
        callback(null, socket!);
      });
    },
  });
}

const agents = new Map<string, Agent>();

/** One shared, connection-pooling guarded dispatcher per policy. */
export function guardedDispatcher(policy: DestinationPolicy): Dispatcher {
  const key = JSON.stringify([policy.allowPrivate, [...(policy.allowedAddresses ?? [])].sort()]);
  let agent = agents.get(key);
  if (!agent) {
    agent = createGuardedAgent(policy);
    agents.set(key, agent);
  }
  return agent;
}

/** Closes the shared dispatchers (worker shutdown, tests). */
export async function closeGuardedDispatchers(): Promise<void> {
  const closing = [...agents.values()].map((agent) => agent.close());
  agents.clear();
  await Promise.all(closing);
}
