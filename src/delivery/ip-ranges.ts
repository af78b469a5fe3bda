import { isIPv4, isIPv6 } from 'node:net';

/**
 * Address ranges a webhook must never reach unless private destinations are allowed: anything that
 * lands inside the host, its network or the cloud's metadata service rather than on the internet.
 */
interface Range {
  prefix: Uint8Array;
  bits: number;
  label: string;
}

function range(cidr: string, label: string): Range {
  const [address, bits] = cidr.split('/');
  return { prefix: addressBytes(address)!, bits: Number(bits), label };
}

const IPV4_RANGES: Range[] = [
  range('0.0.0.0/8', 'an unspecified ("this network") address'),
  range('10.0.0.0/8', 'a private address'),
  range('100.64.0.0/10', 'a carrier-grade NAT address'),
  range('127.0.0.0/8', 'a loopback address'),
  range('169.254.0.0/16', 'a link-local address'),
  range('172.16.0.0/12', 'a private address'),
  range('192.0.0.0/24', 'an IETF protocol assignment address'),
  range('192.0.2.0/24', 'a documentation address'),
  range('192.168.0.0/16', 'a private address'),
  range('198.18.0.0/15', 'a benchmarking address'),
  range('198.51.100.0/24', 'a documentation address'),
  range('203.0.113.0/24', 'a documentation address'),
  range('224.0.0.0/4', 'a multicast address'),
  range('240.0.0.0/4', 'a reserved or broadcast address'),
];

const IPV6_RANGES: Range[] = [
  range('::/128', 'an unspecified address'),
  range('::1/128', 'a loopback address'),
  range('64:ff9b:1::/48', 'a local-use NAT64 address'),
  range('100::/64', 'a discard-only address'),
  range('2001::/32', 'a Teredo address'),
  range('2001:db8::/32', 'a documentation address'),
  range('fc00::/7', 'a private (unique local) address'),
  range('fe80::/10', 'a link-local address'),
  range('fec0::/10', 'a site-local address'),
  range('ff00::/8', 'a multicast address'),
];

/** IPv6 ranges that carry an IPv4 address (starting at byte `offset`), which is judged in its place. */
const IPV4_CARRIERS: { prefix: Range; offset: number }[] = [
  { prefix: range('::ffff:0:0/96', 'IPv4-mapped'), offset: 12 },
  { prefix: range('::/96', 'IPv4-compatible'), offset: 12 },
  { prefix: range('64:ff9b::/96', 'NAT64'), offset: 12 },
  { prefix: range('2002::/16', '6to4'), offset: 2 },
];

function parseIPv4(address: string): Uint8Array {
  return Uint8Array.from(address.split('.').map(Number));
}

function parseIPv6(address: string): Uint8Array {
  const bytes = new Uint8Array(16);
  let text = address.split('%')[0];
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    tail = [...parseIPv4(text.slice(lastColon + 1))];
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [head, rest] = text.split('::');
  const groups = (part: string | undefined) =>
    part ? part.split(':').map((group) => parseInt(group, 16)) : [];
  const front = groups(head);
  const back = rest === undefined ? [] : groups(rest);
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  all.forEach((group, index) => {
    bytes[index * 2] = group >> 8;
    bytes[index * 2 + 1] = group & 0xff;
  });
  if (tail.length) bytes.set(tail, 12);
  return bytes;
}

/** The address as bytes (4 for IPv4, 16 for IPv6), or undefined when it is not an IP literal. */
export function addressBytes(address: string): Uint8Array | undefined {
  if (isIPv4(address)) return parseIPv4(address);
  if (isIPv6(address)) return parseIPv6(address);
  return undefined;
}

function inRange(bytes: Uint8Array, candidate: Range): boolean {
  if (bytes.length !== candidate.prefix.length) return false;
  const whole = Math.floor(candidate.bits / 8);
  for (let index = 0; index < whole; index++) if (bytes[index] !== candidate.prefix[index]) return false;
  const remainder = candidate.bits % 8;
  if (!remainder) return true;
  const mask = (0xff << (8 - remainder)) & 0xff;
  return (bytes[whole] & mask) === (candidate.prefix[whole] & mask);
}

function describe(bytes: Uint8Array): string | undefined {
  if (bytes.length === 4) return IPV4_RANGES.find((candidate) => inRange(bytes, candidate))?.label;
  const own = IPV6_RANGES.find((candidate) => inRange(bytes, candidate));
  if (own) return own.label;
  for (const { prefix, offset } of IPV4_CARRIERS) {
    if (inRange(bytes, prefix)) {
      const embedded = describe(bytes.subarray(offset, offset + 4));
      return embedded && `${embedded} (${prefix.label})`;
    }
  }
  return undefined;
}

/**
 * Why an IP address is not a public internet address (`"a loopback address"`), or undefined when it
 * is public. Throws for input that is not an IP literal.
 */
export function nonPublicReason(address: string): string | undefined {
  const bytes = addressBytes(address);
  if (!bytes) throw new TypeError(`not an IP address: ${address}`);
  return describe(bytes);
}

const MAPPED = IPV4_CARRIERS[0].prefix;

/** IPv4-mapped IPv6 addresses become their IPv4 address, so both spellings compare equal. */
function canonicalBytes(address: string): Uint8Array | undefined {
  const bytes = addressBytes(address);
  return bytes && inRange(bytes, MAPPED) ? bytes.subarray(12) : bytes;
}

/** Compares two IP literals by value: `::ffff:7f00:1`, `::ffff:127.0.0.1` and `127.0.0.1` are one address. */
export function sameAddress(left: string, right: string): boolean {
  const a = canonicalBytes(left);
  const b = canonicalBytes(right);
  return !!a && !!b && a.length === b.length && a.every((byte, index) => byte === b[index]);
}
