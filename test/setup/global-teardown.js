import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { tsImport } from 'tsx/esm/api';

/**
 * A whole run must have checked a success answer of every route against its declared schema
 * (the api records each checked answer in answers.log; see assertDeclaredAnswer in src/api/app.ts).
 * A run of chosen files or tests checks nothing here.
 */
async function assertEveryRouteAnswered(globalConfig) {
  const log = join(process.env.FERRY_DATA_DIR, 'answers.log');
  const partial = globalConfig.testPathPatterns?.isSet?.() || globalConfig.testNamePattern;
  if (partial || !existsSync(log)) return;
  const answered = new Set(
    readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => /\s[23]\d\d$/.test(line))
      .map((line) => line.split(' ')[0]),
  );
  const { allRoutes } = await tsImport('../../src/api/routes.ts', import.meta.url);
  // A route that declares no success (the hosted service's operations, answered 501) has none to check.
  const unchecked = allRoutes()
    .filter((route) => Object.keys(route.responses).some((status) => /^[23]/.test(status)))
    .map((route) => route.operationId)
    .filter((operationId) => !answered.has(operationId));
  if (unchecked.length) {
    throw new Error(
      `No test checked a success answer of: ${unchecked.join(', ')}. Add a test that calls them.`,
    );
  }
}

/** Stops the Temporal dev server, checks the routes' answers were covered, drops the run's database. */
export default async function globalTeardown(globalConfig) {
  const temporal = globalThis.__ferryTemporal;
  await temporal?.stop();
  try {
    await assertEveryRouteAnswered(globalConfig);
  } finally {
    const url = new URL(process.env.DATABASE_URL);
    const name = url.pathname.slice(1);
    url.pathname = '/postgres';
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    await client.query(`drop database if exists "${name}" with (force)`);
    await client.end();
    if (process.env.FERRY_DATA_DIR) rmSync(process.env.FERRY_DATA_DIR, { recursive: true, force: true });
  }
}
