import { request } from 'undici';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nonPublicReason, sameAddress } from '../../src/delivery/ip-ranges.js';
import {
  assertDeliverableUrl,
  createGuardedAgent,
  DestinationUrlError,
  type ResolveHost,
} from '../../src/delivery/url-guard.js';

const strict = { allowPrivate: false };
const noDns: ResolveHost = () => Promise.reject(new Error('DNS must not be consulted for an IP literal'));
const resolvesTo =
  (...addresses: string[]): ResolveHost =>
  () =>
    Promise.resolve(addresses);

/** `'system'` resolves with the operating system's resolver, as deliveries do. */
async function refusal(
  url: string,
  policy = strict,
  resolve: ResolveHost | 'system' = noDns,
): Promise<DestinationUrlError> {
  try {
    await assertDeliverableUrl(url, policy, resolve === 'system' ? undefined : resolve);
  } catch (error) {
    if (error instanceof DestinationUrlError) return error;
    throw error;
  }
  throw new Error(`${url} was allowed`);
}

describe('assertDeliverableUrl', () => {
  it.each([
    ['http://127.0.0.1/', 'a loopback address'],
    ['http://127.255.10.1/', 'a loopback address'],
    ['http://2130706433/', 'a loopback address'],
    ['http://0x7f.1/', 'a loopback address'],
    ['http://10.1.2.3/', 'a private address'],
    ['http://172.16.0.1/', 'a private address'],
    ['http://172.31.255.255/', 'a private address'],
    ['http://192.168.1.1/', 'a private address'],
    ['http://169.254.169.254/latest/meta-data', 'a link-local address'],
    ['http://100.64.0.1/', 'a carrier-grade NAT address'],
    ['http://100.127.255.254/', 'a carrier-grade NAT address'],
    ['http://0.0.0.0/', 'an unspecified ("this network") address'],
    ['http://0.1.2.3/', 'an unspecified ("this network") address'],
    ['http://224.0.0.1/', 'a multicast address'],
    ['http://255.255.255.255/', 'a reserved or broadcast address'],
    ['http://[::1]/', 'a loopback address'],
    ['http://[::]/', 'an unspecified address'],
    ['http://[fc00::1]/', 'a private (unique local) address'],
    ['http://[fd12:3456:789a::1]/', 'a private (unique local) address'],
    ['http://[fe80::1]/', 'a link-local address'],
    ['http://[febf:ffff::1]/', 'a link-local address'],
    ['http://[ff02::1]/', 'a multicast address'],
    ['http://[::ffff:127.0.0.1]/', 'a loopback address (IPv4-mapped)'],
    ['http://[::ffff:10.0.0.1]/', 'a private address (IPv4-mapped)'],
    ['http://[::ffff:169.254.169.254]/', 'a link-local address (IPv4-mapped)'],
    ['http://[64:ff9b::a00:1]/', 'a private address (NAT64)'],
    ['http://[2002:7f00:1::]/', 'a loopback address (6to4)'],
    ['http://198.18.0.1/', 'a benchmarking address'],
    ['http://203.0.113.9/', 'a documentation address'],
    ['http://[64:ff9b:1::a9fe:a9fe]/', 'a local-use NAT64 address'],
    ['http://[2001::1]/', 'a Teredo address'],
    ['http://[100::1]/', 'a discard-only address'],
    ['http://[2001:db8::1]/', 'a documentation address'],
  ])('refuses %s as %s', async (url, reason) => {
    const error = await refusal(url);
    expect(error.code).toBe('non-public-address');
    expect(error.message).toContain(`is ${reason};`);
  });

  it.each([
    'https://8.8.8.8/hook',
    'https://1.1.1.1:8443/hook',
    'http://172.32.0.1/',
    'http://172.15.255.255/',
    'http://100.128.0.1/',
    'http://100.63.255.255/',
    'http://192.169.0.1/',
    'http://11.0.0.1/',
    'https://[2606:4700:4700::1111]/',
    'https://[::ffff:8.8.8.8]/',
  ])('allows the public literal %s without consulting DNS or connecting', async (url) => {
    await expect(assertDeliverableUrl(url, strict, noDns)).resolves.toBeInstanceOf(URL);
  });

  it('refuses localhost, which resolves to loopback', async () => {
    const error = await refusal('http://localhost:9/hook', strict, 'system');
    expect(error.code).toBe('non-public-address');
    expect(error.message).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/);
  });

  it('refuses a host name when any of its addresses is not public', async () => {
    await expect(
      assertDeliverableUrl('https://hooks.example.com/', strict, resolvesTo('93.184.216.34')),
    ).resolves.toBeInstanceOf(URL);
    const error = await refusal(
      'https://hooks.example.com/',
      strict,
      resolvesTo('93.184.216.34', '10.0.0.7'),
    );
    expect(error.message).toBe(
      'hooks.example.com resolves to 10.0.0.7, which is a private address; webhook destinations must be public internet addresses',
    );
  });

  it('reports a host that does not resolve as unresolvable', async () => {
    const notFound: ResolveHost = () =>
      Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' }));
    const error = await refusal('https://nowhere.invalid/', strict, notFound);
    expect(error.code).toBe('unresolvable');
    expect(error.message).toBe('nowhere.invalid could not be resolved (ENOTFOUND)');
  });

  it('allows private addresses and localhost when allowPrivate is set', async () => {
    for (const url of ['http://127.0.0.1:8080/', 'http://localhost/', 'http://[::1]/', 'http://10.0.0.1/']) {
      await expect(assertDeliverableUrl(url, { allowPrivate: true }, noDns)).resolves.toBeInstanceOf(URL);
    }
  });

  it('allows a listed private address and nothing else', async () => {
    const policy = { allowPrivate: false, allowedAddresses: ['10.0.0.5'] };
    await expect(assertDeliverableUrl('http://10.0.0.5/', policy, noDns)).resolves.toBeInstanceOf(URL);
    await expect(assertDeliverableUrl('http://[::ffff:10.0.0.5]/', policy, noDns)).resolves.toBeInstanceOf(
      URL,
    );
    expect((await refusal('http://10.0.0.6/', policy)).code).toBe('non-public-address');
  });

  it.each([
    ['ftp://example.com/', 'unsupported-scheme', 'the destination URL must use http or https, not ftp'],
    ['file:///etc/passwd', 'unsupported-scheme', 'the destination URL must use http or https, not file'],
    ['not a url', 'invalid-url', 'the destination URL is not a valid absolute URL'],
    ['https://localhost:0/', 'invalid-url', 'the destination URL names port 0'],
    [
      'https://user:hunter2@example.com/',
      'credentials-in-url',
      'the destination URL must not contain a user name or password; send credentials as destination headers',
    ],
  ])('refuses %s (%s)', async (url, code, message) => {
    const error = await refusal(url, { allowPrivate: true });
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
    expect(error.message).not.toContain('hunter2');
  });
});

describe('ip ranges', () => {
  it('treats every spelling of one address as the same address', () => {
    expect(sameAddress('127.0.0.1', '::ffff:127.0.0.1')).toBe(true);
    expect(sameAddress('::ffff:7f00:1', '::ffff:127.0.0.1')).toBe(true);
    expect(sameAddress('2001:db8::1', '2001:0db8:0:0:0:0:0:1')).toBe(true);
    expect(sameAddress('127.0.0.1', '127.0.0.2')).toBe(false);
  });

  it('finds no reason to refuse public addresses', () => {
    expect(nonPublicReason('93.184.216.34')).toBeUndefined();
    expect(nonPublicReason('2a00:1450:4001:80b::200e')).toBeUndefined();
    expect(nonPublicReason('64:ff9b::808:808')).toBeUndefined();
  });
});

describe('createGuardedAgent', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer((_req, res) => res.end('reached'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('refuses at connect time a host name resolving to loopback, whatever was checked before', async () => {
    const agent = createGuardedAgent(strict);
    try {
      await expect(request(`http://localhost:${port}/`, { dispatcher: agent })).rejects.toThrow(
        /^localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/,
      );
      await expect(request(`http://localhost:${port}/`, { dispatcher: agent })).rejects.toBeInstanceOf(
        DestinationUrlError,
      );
    } finally {
      await agent.close();
    }
  });

  it('refuses a loopback IP literal before connecting', async () => {
    const agent = createGuardedAgent(strict);
    let connections = 0;
    const count = () => connections++;
    server.on('connection', count);
    try {
      await expect(request(`http://127.0.0.1:${port}/`, { dispatcher: agent })).rejects.toThrow(
        '127.0.0.1 is a loopback address; webhook destinations must be public internet addresses',
      );
      expect(connections).toBe(0);
    } finally {
      server.off('connection', count);
      await agent.close();
    }
  });

  it('connects to an allowed address', async () => {
    for (const policy of [{ allowPrivate: true }, { allowPrivate: false, allowedAddresses: ['127.0.0.1'] }]) {
      const agent = createGuardedAgent(policy);
      try {
        const response = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent });
        expect(await response.body.text()).toBe('reached');
      } finally {
        await agent.close();
      }
    }
  });
});
