import type { EntityMetadata, EntitySchema } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Plain SQL for the hot read paths of the API. A `findOne` through the ORM costs about 0.8 ms of
 * CPU (query building, hydration, the identity map) against about 0.1 ms for the same query on the
 * driver; a get or list that needs no unit of work reads its rows here instead, on a connection of
 * the ORM's own pool, and maps them to the entities' plain shapes with the ORM's metadata, so the
 * views built from them are the same as those built from managed entities.
 */

type Row = Record<string, unknown>;

export interface PgClient {
  /** `name`: a statement the connection prepares once and reuses. */
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: Row[] }>;
}

interface KnexClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<unknown>;
}

const prepared = new Map<string, { name: string; text: string }>();

/**
 * A statement as the driver prepares it: `?` placeholders (as knex writes them) become `$1, $2, ...`,
 * and it gets a name of its own, so each pooled connection parses and plans it once (a join of
 * eight tables takes PostgreSQL longer to plan than to run).
 */
function preparedStatement(sql: string): { name: string; text: string } {
  let statement = prepared.get(sql);
  if (!statement) {
    let index = 0;
    statement = { name: `ferry_read_${prepared.size + 1}`, text: sql.replace(/\?/g, () => `$${++index}`) };
    prepared.set(sql, statement);
  }
  return statement;
}

/**
 * The rows of one statement (placeholders `?`; no `?` operator in the text; a fixed text per
 * shape of query, values only in `params`, since each text is prepared once per connection).
 * Inside a transaction of `em` the statement runs on that transaction; otherwise on a pooled
 * connection, straight to the driver. Timestamps come back as PostgreSQL writes them (the ORM's
 * type parsers): map rows with `rowMapper`.
 */
export async function rawRows(em: EntityManager, sql: string, params: unknown[]): Promise<Row[]> {
  const transaction = em.getTransactionContext();
  if (transaction) {
    return em.getConnection().execute<Row[]>(sql, params, 'all', transaction);
  }
  return withPooledConnection(
    em,
    async (connection) => (await connection.query({ ...preparedStatement(sql), values: params })).rows,
  );
}

/**
 * Rows a list reads per statement: about a MB of JSON, whatever the table's size. Each statement
 * costs its own round trip and row description: at 500 rows a 10,000-row list took 10-25 % more
 * CPU than one statement, at 1,000 about 10 %.
 */
export const LIST_BATCH_ROWS = 1000;

export interface RowListing {
  /** `select ... from ... join ...`, without `where`. */
  sql: string;
  /** The listing's conditions (`?` placeholders), values in `params`. */
  where: string;
  params: unknown[];
  /**
   * The columns the listing is ordered by, as selected (`alias.column`), the last one unique: an
   * index in this order keeps each batch a range scan.
   */
  order: string[];
  batchRows?: number;
}

/**
 * The rows of a listing a batch at a time, each batch one statement that starts after the last row
 * of the one before (keyset), so that a list of any length holds one batch in memory and a pooled
 * connection only while a batch is read, never while a slow client takes the answer. As with any
 * paged read, a row created or deleted while the list is sent may be in it or not; no row is sent
 * twice, and rows present throughout are all sent, in order.
 */
export async function* rowBatches(em: EntityManager, listing: RowListing): AsyncGenerator<Row[]> {
  const batchRows = listing.batchRows ?? LIST_BATCH_ROWS;
  const order = listing.order.join(', ');
  const afterLast = `(${order}) > (${listing.order.map(() => '?').join(', ')})`;
  let last: Row | undefined;
  for (;;) {
    const rows = await rawRows(
      em,
      `${listing.sql} where ${listing.where}${last ? ` and ${afterLast}` : ''} order by ${order} limit ?`,
      // Timestamps are PostgreSQL's own text, to the microsecond, so the next batch starts exactly after.
      [...listing.params, ...(last ? listing.order.map((column) => last![column]) : []), batchRows],
    );
    if (rows.length) yield rows;
    if (rows.length < batchRows) return;
    last = rows[rows.length - 1];
  }
}

/** Runs `work` on a connection of the ORM's pool, straight on the driver, and gives it back after. */
export async function withPooledConnection<T>(
  em: EntityManager,
  work: (connection: PgClient) => Promise<T>,
): Promise<T> {
  const client = em.getKnex().client as unknown as KnexClient;
  const connection = await client.acquireConnection();
  try {
    return await work(connection);
  } finally {
    await client.releaseConnection(connection);
  }
}

interface Column {
  property: string;
  field: string;
  date: boolean;
}

const columnCache = new WeakMap<EntityMetadata, Column[]>();

function columnsOf(em: EntityManager, entity: EntitySchema): Column[] {
  const meta = em.getMetadata().get(entity.meta.className);
  let columns = columnCache.get(meta);
  if (!columns) {
    columns = meta.props
      .filter((prop) => prop.fieldNames?.length === 1)
      .map((prop) => ({
        property: prop.name,
        field: prop.fieldNames[0],
        date: prop.runtimeType === 'Date' || prop.type === 'Date',
      }));
    columnCache.set(meta, columns);
  }
  return columns;
}

/** `alias.column as "alias.column", ...`: every column of `entity`, named apart from other tables'. */
export function selectColumns(em: EntityManager, entity: EntitySchema, alias: string): string {
  return columnsOf(em, entity)
    .map(({ field }) => `${alias}.${field} as "${alias}.${field}"`)
    .join(', ');
}

/**
 * Maps a row selected with `selectColumns(em, entity, alias)` to the entity's plain shape, as the ORM
 * hydrates it: properties by name, timestamps as Dates, JSON columns parsed (by the driver). For a
 * left join, check `row['alias.id']` first.
 */
export function rowMapper<T>(em: EntityManager, entity: EntitySchema<T>, alias: string): (row: Row) => T {
  // A function of its own per entity and alias, with the keys written in: a list maps thousands of
  // rows, and one shared loop over every entity's columns made each property access polymorphic.
  const fields = columnsOf(em, entity as EntitySchema).map(({ property, field, date }) => {
    const value = `row[${JSON.stringify(`${alias}.${field}`)}]`;
    return `${JSON.stringify(property)}: ${date ? `toDate(${value})` : value}`;
  });
  const build = new Function('toDate', `return (row) => ({ ${fields.join(', ')} });`) as (
    toDate: (value: unknown) => Date | null | undefined,
  ) => (row: Row) => T;
  return build(toDate);
}

function toDate(value: unknown): Date | null | undefined {
  return value == null ? (value as null | undefined) : new Date(value as string);
}

const memos = new WeakMap<object, Map<string, unknown>>();

/**
 * What `build` makes from the ORM's metadata (statements, row mappers), made once per ORM: a hot
 * path then builds no SQL text per request.
 */
export function memoized<T>(em: EntityManager, key: string, build: () => T): T {
  const metadata = em.getMetadata();
  let memo = memos.get(metadata);
  if (!memo) memos.set(metadata, (memo = new Map()));
  let value = memo.get(key) as T | undefined;
  if (value === undefined) memo.set(key, (value = build()));
  return value;
}
