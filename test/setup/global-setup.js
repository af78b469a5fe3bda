import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';

// Jest loads global setup outside its module system, so TypeScript sources come in through tsx.
const load = (path) => tsImport(path, import.meta.url);

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * Once per `npm test`: a fresh PostgreSQL database with every migration applied, one Temporal dev
 * server, and one workflow bundle that every test worker reuses. Test files inherit the environment.
 */
export default async function globalSetup() {
  const root = process.cwd();
  const runId = `${Date.now().toString(36)}_${process.pid}`;
  const baseUrl = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  baseUrl.pathname = `/ferry_test_${runId}`;
  Object.assign(process.env, {
    NODE_ENV: 'test',
    FERRY_ENV: 'test',
    DATABASE_URL: baseUrl.toString(),
    FERRY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    FERRY_BUILDER_TOKEN_SECRET: randomBytes(32).toString('base64'),
    FERRY_DATA_DIR: join(root, '.data', 'test', runId),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    FERRY_ALLOW_PRIVATE_DESTINATIONS: 'true',
  });
  mkdirSync(process.env.FERRY_DATA_DIR, { recursive: true });

  const { migrate } = await load('../../src/db/orm.ts');
  await migrate(process.env.DATABASE_URL);

  const { startDevServer } = await load('../../src/temporal/dev-server.ts');
  const temporal = await startDevServer({ port: await freePort() });
  process.env.TEMPORAL_ADDRESS = temporal.address;
  globalThis.__ferryTemporal = temporal;

  const { writeWorkflowBundle } = await load('../../src/cli/workflow-bundle.ts');
  const bundlePath = join(process.env.FERRY_DATA_DIR, 'workflow-bundle.js');
  await writeWorkflowBundle(bundlePath);
  process.env.FERRY_TEST_WORKFLOW_BUNDLE = bundlePath;

  const { closeOrm } = await load('../../src/db/orm.ts');
  await closeOrm();
}
