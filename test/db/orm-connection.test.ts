import { describe, expect, it } from '@jest/globals';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { ormOptions } from '../../src/db/orm.js';

/**
 * DATABASE_URL reaches the ORM whole: the parameters libpq and `pg` read from it (a socket directory
 * in `host`, `application_name`, `options`, `sslmode`) are the ones the ORM connects with too.
 */

async function sessionThrough(databaseUrl: string): Promise<Record<string, unknown>> {
  const orm = await MikroORM.init(ormOptions(databaseUrl));
  try {
    const [row] = await orm.em.getConnection().execute(
      `select inet_client_addr() as client_address, current_setting('application_name') as application_name,
                current_setting('statement_timeout') as statement_timeout, now() as now`,
    );
    return row;
  } finally {
    await orm.close(true);
  }
}

/** The directory of the server's own Unix socket, asked of it over the URL's TCP connection. */
async function socketDirectory(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ directories: string }>(
      `select current_setting('unix_socket_directories') as directories`,
    );
    return rows[0].directories.split(',')[0].trim();
  } finally {
    await client.end();
  }
}

describe('the ORM connection', () => {
  const databaseUrl = process.env.DATABASE_URL!;

  it('connects through the socket directory named in ?host=, with the URL’s session parameters', async () => {
    const url = new URL(databaseUrl);
    url.hostname = '';
    url.port = '';
    url.searchParams.set('host', await socketDirectory(databaseUrl));
    url.searchParams.set('application_name', 'ferry-orm-test');
    url.searchParams.set('options', '-c statement_timeout=1234');

    const session = await sessionThrough(url.toString());

    // A Unix socket has no client address; TCP would have 127.0.0.1.
    expect(session.client_address).toBeNull();
    expect(session.application_name).toBe('ferry-orm-test');
    expect(session.statement_timeout).toBe('1234ms');
    // MikroORM's own type parsing is kept: timestamps come back as its strings.
    expect(typeof session.now).toBe('string');
  });

  it('still connects over TCP to the host and port of a plain URL', async () => {
    const session = await sessionThrough(databaseUrl);
    expect(session.client_address).not.toBeNull();
  });
});
