import { rmSync } from 'node:fs';
import pg from 'pg';

/** Stops the Temporal dev server and drops the run's database. */
export default async function globalTeardown() {
  const temporal = globalThis.__ferryTemporal;
  await temporal?.stop();
  const url = new URL(process.env.DATABASE_URL);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  await client.query(`drop database if exists "${name}" with (force)`);
  await client.end();
  if (process.env.FERRY_DATA_DIR) rmSync(process.env.FERRY_DATA_DIR, { recursive: true, force: true });
}
