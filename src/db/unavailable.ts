/**
 * Whether an error says PostgreSQL could not be reached or dropped the connection (a restart, a
 * failover, a network cut), as opposed to refusing the statement. The statement that met it did not
 * commit (a COMMIT that met it may or may not have), and trying again later may succeed.
 */

/** Connection exceptions (08xxx) and the shutdown/startup ones (57P01–57P03) PostgreSQL sends. */
const unavailableSqlStates = new Set([
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
]);
const unavailableSocketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);
/** What node-postgres says, without a code, when its connection died under a query. */
const unavailableMessages = [
  /^Connection terminated unexpectedly/,
  /Client has encountered a connection error and is not queryable/,
  /Connection terminated$/,
  /terminating connection due to (unexpected postmaster exit|administrator command)/,
  /the database system is (starting up|shutting down|in recovery mode)/,
  // knex, when a statement follows one whose connection died inside the same transaction.
  /^Transaction query already complete/,
];

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === 'string' && (unavailableSqlStates.has(code) || unavailableSocketCodes.has(code)))
      return true;
    if (
      typeof message === 'string' &&
      unavailableMessages.some((pattern) => pattern.test(message.split(' - ').at(-1)!))
    )
      return true;
    current = cause;
  }
  return false;
}
