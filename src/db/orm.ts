import { MikroORM, type EntityManager, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import pg from 'pg';
import { parse } from 'pg-connection-string';
import { config } from '../config.js';
import { logger } from '../logger.js';
import { entities } from './entities/index.js';
import { migrationsList } from './migrations/index.js';
import { closeRepairMarks } from './repair-marks.js';

/**
 * The driver's connection settings, read from the URL as `pg` and libpq read it. MikroORM's own
 * reading keeps host, port, user, password and database only, so a socket directory
 * (`?host=/var/run/postgresql`, `?host=/cloudsql/…`), `sslmode` and the other parameters would be
 * dropped, and the ORM would connect elsewhere than Ferry's other clients of the same URL.
 */
function driverConnection(databaseUrl: string): Record<string, unknown> {
  const { port, ...settings } = parse(databaseUrl);
  return Object.fromEntries(
    Object.entries({ ...settings, port: port ? Number(port) : undefined }).filter(
      ([, value]) => value !== undefined && value !== null && value !== '',
    ),
  );
}

export function ormOptions(databaseUrl: string): Options {
  return {
    clientUrl: databaseUrl,
    driverOptions: { connection: driverConnection(databaseUrl) },
    entities,
    extensions: [Migrator],
    migrations: {
      migrationsList,
      transactional: true,
      allOrNothing: true,
      tableName: 'ferry_migrations',
      silent: true,
    },
    discovery: { warnWhenNoEntities: false },
    debug: false,
    allowGlobalContext: false,
    pool: { min: 0, max: 10 },
  };
}

let orm: Promise<MikroORM> | undefined;

/** The process-wide ORM; the first caller connects. */
export function getOrm(): Promise<MikroORM> {
  orm ??= MikroORM.init(ormOptions(config().databaseUrl));
  return orm;
}

/** A fresh entity manager, one per request or activity, never shared. */
export async function em(): Promise<EntityManager> {
  return (await getOrm()).em.fork();
}

/** Runs `work` in one transaction: everything it writes lands together or not at all. */
export async function transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
  return (await em()).transactional(work);
}

export async function closeOrm(): Promise<void> {
  await closeRepairMarks();
  if (!orm) return;
  const current = orm;
  orm = undefined;
  await (await current).close(true);
}

/** Creates the database named in `databaseUrl` when the server does not have it yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const existing = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (existing.rowCount === 0) {
      await client.query(`create database "${name.replaceAll('"', '""')}"`);
      logger.info({ database: name }, 'created database');
    }
  } finally {
    await client.end();
  }
}

export async function migrate(databaseUrl: string = config().databaseUrl): Promise<string[]> {
  await ensureDatabase(databaseUrl);
  const migrationOrm = await MikroORM.init(ormOptions(databaseUrl));
  try {
    const applied = await migrationOrm.getMigrator().up();
    return applied.map((migration) => migration.name);
  } finally {
    await migrationOrm.close(true);
  }
}
