import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { assertDeliverableAddress, DestinationUrlError } from '../url-guard.js';

/**
 * The address a broker client connects to, checked against the private-address policy: a host name
 * is resolved once and the client is given the address that was checked, so DNS cannot answer
 * differently between the check and the connection.
 */
export async function checkedAddress(host: string, allowPrivate: boolean): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare)) {
    assertDeliverableAddress(bare, { allowPrivate });
    return bare;
  }
  const addresses = await lookup(bare, { all: true }).catch(() => []);
  if (!addresses.length) throw new DestinationUrlError('unresolvable', `${bare} could not be resolved`);
  for (const { address } of addresses) assertDeliverableAddress(address, { allowPrivate }, bare);
  return addresses[0].address;
}

/** A URL's host:port with the address substituted; IPv6 addresses in brackets. */
export function hostPort(address: string, port: number): string {
  return `${isIP(address) === 6 ? `[${address}]` : address}:${port}`;
}

/** The checks every broker URL gets at create time: scheme, no credentials, a host. */
export function serverUrlIssues(value: string, schemes: readonly string[], field = 'metadata.serverUrl') {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return [{ in: 'body' as const, name: field, detail: `${field} is not a URL` }];
  }
  const detail = !schemes.includes(url.protocol.slice(0, -1))
    ? `${field} must start with ${schemes.map((scheme) => `${scheme}://`).join(' or ')}`
    : url.username || url.password
      ? `credentials go in secrets, not in ${field}`
      : !url.hostname
        ? `${field} has no host`
        : undefined;
  return detail ? [{ in: 'body' as const, name: field, detail }] : [];
}
