import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  connectByHttp,
  createSandboxApp,
  oauthConnect,
  pageResult,
  sql,
  startOAuthStack,
  type OAuthStack,
} from '../oauth/helpers.js';

let oauth: OAuthStack;

beforeAll(async () => {
  oauth = await startOAuthStack();
});
afterAll(async () => oauth.close());

/** Every row of every table of the database, as text. */
async function wholeDatabase(): Promise<string> {
  const tables = await sql<{ table_name: string }>(
    `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
  );
  const dumps = await Promise.all(
    tables.map(async ({ table_name }) => {
      const rows = await sql<{ row: string }>(
        `select t::text as row from "${table_name.replaceAll('"', '""')}" t`,
      );
      return rows.map((row) => row.row).join('\n');
    }),
  );
  return dumps.join('\n');
}

describe('credentials at rest', () => {
  it('no client secret, token, API key, password or OAuth state is stored in plaintext', async () => {
    const base = `/projects/${oauth.stack.project.name}`;
    const secrets: string[] = ['sandbox-secret', 'app-secret-for-rest-check'];
    await createSandboxApp(oauth.stack);
    await oauth.stack.api('POST', `${base}/provider-apps`, {
      body: { provider: 'hubspot', clientId: 'hs', clientSecret: 'app-secret-for-rest-check' },
    });
    const { page } = await connectByHttp(oauth, { groupRef: 'at-rest' });
    const oauthId = pageResult(page.body).connectionId;
    await oauth.stack.api('GET', `${base}/connections/${oauthId}?refresh=force`);
    const generated = [
      { provider: 'sandboxApiKey', groupRef: 'rest-1', apiKey: 'plain-api-key-at-rest' },
      {
        provider: 'ashby',
        groupRef: 'rest-2',
        basicAuth: { username: 'rest-user', password: 'plain-password-at-rest' },
      },
      {
        provider: 'sandbox',
        groupRef: 'rest-3',
        oauth2ClientCredentials: { clientId: 'sandbox-client', clientSecret: 'sandbox-secret' },
      },
    ];
    const ids = [oauthId];
    for (const body of generated) {
      const response = await oauth.stack.api('POST', `${base}/connections:generate`, {
        body: { consumerRef: 'c', ...body },
      });
      expect(response.status).toBe(201);
      ids.push(response.body.id);
    }
    secrets.push('plain-api-key-at-rest', 'plain-password-at-rest');
    for (const id of ids) {
      const view = await oauth.stack.api(
        'GET',
        `${base}/connections/${id}?includeCreds=true&includeRefreshToken=true`,
      );
      const { oauth2AuthorizationCode: code, oauth2ClientCredentials: cc } = view.body;
      if (code) secrets.push(code.accessToken.token, code.refreshToken.token);
      if (cc) secrets.push(cc.accessToken.token);
    }
    // A flow in flight: its state is in the URL, only its hash may be in the database.
    const pending = await oauthConnect(oauth.stack, { groupRef: 'in-flight' });
    secrets.push(new URL(pending.body).searchParams.get('state')!);
    expect(secrets).toHaveLength(8); // 2 client secrets, key, password, 2 OAuth tokens, 1 client-credentials token, state

    const database = await wholeDatabase();
    expect(database).toContain('at-rest'); // the dump does hold the rows
    const leaked = secrets.filter((secret) => database.includes(secret));
    expect(leaked).toEqual([]);
  });
});
