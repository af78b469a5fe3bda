import type { EntityManager } from '@mikro-orm/postgresql';
import { readBatchSize } from '../metrics.js';
import { rawRows } from './raw.js';

/**
 * Gets by key that arrive together, read in one statement. Under load most of a get's cost is the
 * round trip, not the lookup: each statement is a write to PostgreSQL's socket, a wake-up of its
 * backend and a result to parse. The gets of one read that reach here in the same turn of the
 * event loop (the requests whose bytes arrived together) are read as one `unnest ... cross join
 * lateral` statement, each get's own statement run once per set of values; a get alone runs its
 * own statement, so one client waits for nothing.
 */

type Row = Record<string, unknown>;

/** Declared once (memoized) and passed by reference: gets batch together when they name the same read. */
export interface KeyedRead {
  /** What is read (`operation`, ...), the label of the batch-size metric. */
  name: string;
  /** The statement of one get (`?` placeholders, as `rawRows` takes them). */
  sql: string;
  /** PostgreSQL's type of each placeholder, in order (`uuid`, `text`): the columns of the batch. */
  types: string[];
}

/** Gets read in one statement at most: a batch's arrays stay a few KB. */
export const MAX_READ_BATCH = 100;

interface Waiting {
  params: unknown[];
  resolve: (rows: Row[]) => void;
  reject: (error: unknown) => void;
}

interface Batch {
  em: EntityManager;
  read: KeyedRead;
  waiting: Waiting[];
}

/** Batches filling, per pool (an ORM's knex client) and read. */
const filling = new WeakMap<object, Map<KeyedRead, Batch>>();
const batchStatements = new WeakMap<KeyedRead, string>();

/**
 * The rows `read` finds for `params`, read together with the same read of other requests in this
 * turn of the event loop. Inside a transaction of `em` it reads alone, on that transaction.
 */
export function batchedRows(em: EntityManager, read: KeyedRead, params: unknown[]): Promise<Row[]> {
  if (params.length !== read.types.length) {
    throw new Error(`${read.name}: ${params.length} values for ${read.types.length} placeholders`);
  }
  if (em.getTransactionContext()) return rawRows(em, read.sql, params);
  const pool = em.getKnex().client as object;
  let batches = filling.get(pool);
  if (!batches) filling.set(pool, (batches = new Map()));
  let batch = batches.get(read);
  if (!batch) {
    const started: Batch = { em, read, waiting: [] };
    batches.set(read, (batch = started));
    setImmediate(() => {
      if (batches.get(read) === started) batches.delete(read);
      void readBatch(started);
    });
  }
  const promise = new Promise<Row[]>((resolve, reject) => batch.waiting.push({ params, resolve, reject }));
  // A full batch takes no more gets; the next one starts another.
  if (batch.waiting.length >= MAX_READ_BATCH) batches.delete(read);
  return promise;
}

async function readBatch({ em, read, waiting }: Batch): Promise<void> {
  readBatchSize.observe({ read: read.name }, waiting.length);
  try {
    if (waiting.length === 1) {
      waiting[0].resolve(await rawRows(em, read.sql, waiting[0].params));
      return;
    }
    const columns = read.types.map((_, index) => waiting.map((get) => get.params[index]));
    const rows = await rawRows(em, batchStatement(read), columns);
    const found: Row[][] = waiting.map(() => []);
    for (const { 'batch.n': n, ...row } of rows) found[Number(n) - 1].push(row);
    waiting.forEach((get, index) => get.resolve(found[index]));
  } catch (error) {
    for (const get of waiting) get.reject(error);
  }
}

/**
 * `select w.n, x.* from unnest(?::uuid[], ...) with ordinality w(p1, ..., n) cross join lateral
 * (the get's statement, its placeholders now w's columns) x`: one text per read, prepared once per
 * connection like any other, whatever the batch's size.
 */
function batchStatement(read: KeyedRead): string {
  let sql = batchStatements.get(read);
  if (!sql) {
    const columns = read.types.map((_, index) => `p${index + 1}`);
    let placeholder = 0;
    const get = read.sql.replace(/\?/g, () => `w.${columns[placeholder++]}`);
    if (placeholder !== read.types.length) {
      throw new Error(`${read.name}: ${placeholder} placeholders, ${read.types.length} types`);
    }
    const arrays = read.types.map((type) => `?::${type}[]`).join(', ');
    sql = `select w.n as "batch.n", x.*
             from unnest(${arrays}) with ordinality as w(${columns.join(', ')}, n)
             cross join lateral (${get}) x`;
    batchStatements.set(read, sql);
  }
  return sql;
}
