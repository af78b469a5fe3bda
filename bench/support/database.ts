import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface BenchEnvironment {
  runId: string;
  databaseUrl: string;
  dataDir: string;
  /** Closes the ORM, drops the bench's database and removes its data directory. */
  drop(): Promise<void>;
}

/**
 * A database and data directory of the bench's own, named for this run, set in the environment
 * Ferry's modules read (with fresh keys), and the means to remove both however the bench ends.
 */
export function benchEnvironment(name: string, env: Record<string, string> = {}): BenchEnvironment {
  const runId = `${Date.now().toString(36)}_${process.pid}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'ferry-bench-'));
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/ferry');
  url.pathname = `/${name}_${runId}`;
  Object.assign(process.env, {
    DATABASE_URL: url.toString(),
    FERRY_ENV: 'development',
    FERRY_DATA_DIR: dataDir,
    FERRY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    FERRY_BUILDER_TOKEN_SECRET: randomBytes(32).toString('base64'),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    ...env,
  });
  return {
    runId,
    databaseUrl: url.toString(),
    dataDir,
    async drop() {
      const { closeOrm } = await import('../../src/db/orm.js');
      await closeOrm().catch(() => undefined);
      await dropDatabase(url.toString());
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Drops the database `url` names, connections and all, if it exists. */
export async function dropDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  const name = admin.pathname.slice(1);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists "${name}" with (force)`);
  } finally {
    await client.end();
  }
}
