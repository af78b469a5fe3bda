import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectTcp, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server } from 'node:tls';
import { createWorker } from '../../src/cli/worker.js';
import { resetConfig } from '../../src/config.js';
import { closeTemporalClient, temporalClient } from '../../src/temporal/client.js';
import { temporalConnectionOptions } from '../../src/temporal/connection.js';

/**
 * Ferry reaches a Temporal cluster that requires mutual TLS with the `temporal` CLI's own variables:
 * the test's dev server behind a TLS front that accepts only clients holding a certificate of its
 * CA, as Temporal Cloud and a hardened self-hosted frontend do.
 */

const plainAddress = process.env.TEMPORAL_ADDRESS!;
const savedEnv = { ...process.env };
let dir: string;
let front: Server;
let frontAddress: string;
let handshakes = 0;
const open = new Set<Socket>();

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A CA, a server certificate for localhost and a client certificate, each signed by the CA. */
function makeCertificates(): void {
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=Ferry test CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
  );
  for (const [name, subject, extension] of [
    ['server', '/CN=localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
    ['client', '/CN=ferry-worker', 'extendedKeyUsage=clientAuth'],
  ]) {
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      subject,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    );
    writeFileSync(join(dir, `${name}.ext`), `${extension}\n`);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    );
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ferry-temporal-tls-'));
  makeCertificates();
  const [host, port] = plainAddress.split(':');
  front = createTlsServer(
    {
      key: readFileSync(join(dir, 'server.key')),
      cert: readFileSync(join(dir, 'server.pem')),
      ca: readFileSync(join(dir, 'ca.pem')),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (socket) => {
      handshakes++;
      const upstream: Socket = connectTcp(Number(port), host);
      for (const end of [socket, upstream]) {
        open.add(end);
        end.once('close', () => open.delete(end));
      }
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    },
  );
  front.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  frontAddress = `127.0.0.1:${(front.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await closeTemporalClient();
  for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
  Object.assign(process.env, savedEnv);
  resetConfig();
});

afterAll(async () => {
  // The worker's connection stays open until its process ends: cut it.
  for (const socket of open) socket.destroy();
  await new Promise((resolve) => front.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

function useTlsFront(withClientCertificate: boolean): void {
  Object.assign(process.env, {
    TEMPORAL_ADDRESS: frontAddress,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir, 'ca.pem'),
    TEMPORAL_TLS_SERVER_NAME: 'localhost',
    ...(withClientCertificate && {
      TEMPORAL_TLS_CLIENT_CERT_PATH: join(dir, 'client.pem'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: join(dir, 'client.key'),
    }),
  });
  resetConfig();
}

describe('Temporal over mutual TLS', () => {
  it('connects the API’s client with the client certificate of TEMPORAL_TLS_CLIENT_CERT_PATH', async () => {
    useTlsFront(true);
    const before = handshakes;
    const client = await temporalClient();
    const info = await client.workflowService.getSystemInfo({});
    expect(info.serverVersion).toBeTruthy();
    expect(handshakes).toBeGreaterThan(before);
  });

  it('creates and runs the worker through it', async () => {
    useTlsFront(true);
    const before = handshakes;
    const worker = await createWorker({
      taskQueue: 'temporal-tls-test',
      workflowBundlePath: process.env.FERRY_TEST_WORKFLOW_BUNDLE,
    });
    // A worker that never ran cannot be shut down: run it, and stop at once.
    await worker.runUntil(Promise.resolve());
    expect(handshakes).toBeGreaterThan(before);
  }, 60_000);

  it('is refused by the cluster without a client certificate', async () => {
    useTlsFront(false);
    await expect(temporalClient()).rejects.toThrow();
  });

  it('stops with the variable named when a certificate file cannot be read', () => {
    useTlsFront(true);
    process.env.TEMPORAL_TLS_CLIENT_CERT_PATH = join(dir, 'missing.pem');
    expect(() => temporalConnectionOptions()).toThrow(/TEMPORAL_TLS.*missing\.pem/);
  });
});

describe('temporalConnectionOptions', () => {
  it('speaks plaintext to TEMPORAL_ADDRESS when nothing asks for TLS', () => {
    process.env.TEMPORAL_ADDRESS = '10.0.0.5:7233';
    resetConfig();
    expect(temporalConnectionOptions({})).toEqual({
      address: '10.0.0.5:7233',
    });
  });

  it('turns TLS on for TEMPORAL_API_KEY and sends the key and TEMPORAL_GRPC_META_ headers', () => {
    const options = temporalConnectionOptions({
      TEMPORAL_API_KEY: 'tk-secret',
      TEMPORAL_GRPC_META_TEMPORAL_NAMESPACE: 'ferry.a1b2c',
    });
    expect(options.apiKey).toBe('tk-secret');
    expect(options.tls).toBe(true);
    expect(options.metadata).toEqual({ 'temporal-namespace': 'ferry.a1b2c' });
  });

  it('keeps TLS off when TEMPORAL_TLS is false', () => {
    expect(temporalConnectionOptions({ TEMPORAL_TLS: 'false' }).tls).toBe(false);
  });
});
