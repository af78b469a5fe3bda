import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { getProvider } from '../../src/providers/catalog/index.js';
import { startFakeHubSpot, type FakeHubSpot } from '../connectors/fakes/hubspot.js';
import { startFakePipedrive, type FakePipedrive } from '../connectors/fakes/pipedrive.js';
import { createReadFixture, type ReadFixture } from '../reads/fixtures.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';

/**
 * The search host against the real stack: records of an installation's read object found by field
 * values at the provider now (the sandbox, and HubSpot's CRM search through a local fake), shaped as
 * reads deliver them, a page at a time; and every way a search is refused.
 */

let sandbox: Sandbox;
let hubspot: FakeHubSpot;
let pipedrive: FakePipedrive;
let stack: TestStack;
let fixture: ReadFixture;
const surname = `Lovelace-${randomUUID().slice(0, 8)}`;
const emails = [0, 1, 2].map((index) => `ada${index}-${randomUUID().slice(0, 8)}@example.com`);

async function sandboxCreate(values: Record<string, unknown>): Promise<Record<string, unknown>> {
  const created = await request('POST', `${sandbox.url}/api/v1/contacts`, {
    headers: { 'x-api-key': 'sandbox-demo-key' },
    body: values,
  });
  expect(created.status).toBe(201);
  return created.body;
}

const searchPath = (integrationId: string, query: string) =>
  `/projects/${stack.project.id}/integrations/${integrationId}?${query}`;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 50, companies: 5, deals: 5 });
  hubspot = await startFakeHubSpot();
  pipedrive = await startFakePipedrive();
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({
    hubspot: { baseURL: hubspot.url },
    pipedrive: { baseURL: pipedrive.url },
  });
  resetConfig();
  stack = await startTestStack();
  fixture = await createReadFixture(stack);
  for (const [index, email] of emails.entries()) {
    await sandboxCreate({ email, firstName: `Ada${index}`, lastName: surname });
  }
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fixture?.receiver.stop();
  await sandbox?.close();
  await hubspot?.stop();
  await pipedrive?.stop();
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
});

describe('search on the sandbox provider', () => {
  it('finds the record whose field equals the value, shaped with the installation’s selection and mapping', async () => {
    const found = await stack.search(
      'POST',
      searchPath(fixture.integrationId, `groupRef=${fixture.groupRef}`),
      {
        body: {
          objectName: 'contacts',
          fieldFilters: [{ fieldName: 'email', operator: 'eq', value: emails[1] }],
        },
      },
    );
    expect(found.status).toBe(200);
    expect(found.body.nextPageToken).toBeUndefined();
    expect(found.body.result).toHaveLength(1);
    const [record] = found.body.result;
    // email is required, firstName selected, lastName selected and mapped to surname by the manifest.
    expect(record.fields).toEqual({ email: emails[1], firstname: 'Ada1' });
    expect(record.mappedFields).toEqual({ surname });
    expect(record.raw).toMatchObject({ email: emails[1], firstName: 'Ada1', lastName: surname });
  });

  it('takes a mapped name for a field, and the installation id instead of the group', async () => {
    const found = await stack.search(
      'POST',
      searchPath(fixture.integrationId, `installationId=${fixture.installationId}`),
      {
        body: {
          objectName: 'contacts',
          fieldFilters: [
            { fieldName: 'surname', operator: 'eq', value: surname },
            { fieldName: 'FIRSTNAME', operator: 'eq', value: 'Ada2' },
          ],
        },
      },
    );
    expect(found.status).toBe(200);
    expect(found.body.result.map((record: any) => record.fields.email)).toEqual([emails[2]]);
  });

  it('pages with pageSize and an opaque nextPageToken that carries the filters', async () => {
    const path = searchPath(fixture.integrationId, `groupRef=${fixture.groupRef}`);
    const filters = [{ fieldName: 'lastName', operator: 'eq', value: surname }];
    const first = await stack.search('POST', path, {
      body: { objectName: 'contacts', fieldFilters: filters, pageSize: 2 },
    });
    expect(first.status).toBe(200);
    expect(first.body.result).toHaveLength(2);
    expect(typeof first.body.nextPageToken).toBe('string');
    const second = await stack.search('POST', path, {
      body: {
        objectName: 'contacts',
        fieldFilters: filters,
        pageSize: 2,
        pageToken: first.body.nextPageToken,
      },
    });
    expect(second.status).toBe(200);
    expect(second.body.nextPageToken).toBeUndefined();
    const seen = [...first.body.result, ...second.body.result].map((record: any) => record.fields.email);
    expect(seen.sort()).toEqual([...emails].sort());
  });

  it('answers an empty page when nothing matches', async () => {
    const found = await stack.search(
      'POST',
      searchPath(fixture.integrationId, `groupRef=${fixture.groupRef}`),
      {
        body: {
          objectName: 'contacts',
          fieldFilters: [{ fieldName: 'email', operator: 'eq', value: 'nobody@x.io' }],
        },
      },
    );
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ result: [] });
  });

  it('says which providers support equality search, from their declarations', () => {
    for (const provider of [
      'sandboxApiKey',
      'hubspot',
      'stripe',
      'shopify',
      'dynamicsCRM',
      'capsule',
      'pipedrive',
      'close',
      'copper',
      'activeCampaign',
    ]) {
      expect({ provider, equals: getProvider(provider)!.support.search.operators.equals }).toEqual({
        provider,
        equals: true,
      });
    }
    expect(getProvider('front')?.support.search.operators.equals ?? false).toBe(false);
  });
});

describe('searches refused', () => {
  const body = (overrides: Record<string, unknown> = {}) => ({
    objectName: 'contacts',
    fieldFilters: [{ fieldName: 'email', operator: 'eq', value: emails[0] }],
    ...overrides,
  });
  const search = (query: string, requestBody: unknown, apiKey?: string) =>
    stack.search('POST', searchPath(fixture.integrationId, query), {
      body: requestBody,
      ...(apiKey && { apiKey }),
    });

  it('401 without valid credentials', async () => {
    const answer = await search(`groupRef=${fixture.groupRef}`, body(), 'not-a-key');
    expect(answer.status).toBe(401);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
  });

  it('404 for an object the installation does not read, or a group without an installation', async () => {
    const object = await search(`groupRef=${fixture.groupRef}`, body({ objectName: 'deals' }));
    expect(object.status).toBe(404);
    expect(object.body.detail).toContain('deals');
    const group = await search('groupRef=nobody', body());
    expect(group.status).toBe(404);
  });

  it('422 for a field the installation does not read', async () => {
    const answer = await search(
      `groupRef=${fixture.groupRef}`,
      body({ fieldFilters: [{ fieldName: 'phone', operator: 'eq', value: '555' }] }),
    );
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toContain('"phone"');
  });

  it('400 for an operator other than eq, naming the filter', async () => {
    const answer = await search(
      `groupRef=${fixture.groupRef}`,
      body({ fieldFilters: [{ fieldName: 'email', operator: 'gt', value: 'a' }] }),
    );
    expect(answer.status).toBe(400);
    expect(answer.body.issues).toMatchObject([
      expect.objectContaining({ name: 'fieldFilters[0].operator', value: 'gt' }),
    ]);
  });

  it('400 without a group or installation, or with a page token that is not a search’s', async () => {
    expect((await search('', body())).status).toBe(400);
    const token = await search(`groupRef=${fixture.groupRef}`, body({ pageToken: 'bm90LWEtdG9rZW4' }));
    expect(token.status).toBe(400);
  });
});

describe('search on HubSpot (CRM search, EQ filters)', () => {
  let hub: ReadFixture;

  beforeAll(async () => {
    hub = await createReadFixture(stack, {
      provider: 'hubspot',
      credentials: { oauth2AuthorizationCode: { accessToken: hubspot.credential, refreshToken: 'r-1' } },
      declared: { requiredFields: [], optionalFields: [], optionalFieldsAuto: 'all' },
      configured: { selectedFields: {} },
    });
    // Old enough to be in HubSpot's search index, which shows changes a few seconds late.
    const [first, second] = hubspot.seedRecords('contacts', [Date.now() - 60_000, Date.now() - 59_000]);
    first.properties.firstname = 'Grace';
    second.properties.firstname = 'Alan';
  });

  it('sends an EQ filter group to /crm/v3/objects/{object}/search and answers the matching record', async () => {
    const found = await stack.search('POST', searchPath(hub.integrationId, `groupRef=${hub.groupRef}`), {
      body: {
        objectName: 'contacts',
        fieldFilters: [{ fieldName: 'firstname', operator: 'eq', value: 'Alan' }],
      },
    });
    expect(found.status).toBe(200);
    expect(found.body.result).toHaveLength(1);
    expect(found.body.result[0].raw.properties.firstname).toBe('Alan');
    expect(found.body.result[0].fields.properties.firstname).toBe('Alan');
    const sent = hubspot.requests.filter((r) => r.path === '/crm/v3/objects/contacts/search').at(-1)!;
    expect(sent.method).toBe('POST');
    expect(sent.body).toMatchObject({
      filterGroups: [{ filters: [{ propertyName: 'firstname', operator: 'EQ', value: 'Alan' }] }],
    });
  });

  it('maps HubSpot’s refusal of the query to 422, as reads and writes map provider errors', async () => {
    const answer = await stack.search('POST', searchPath(hub.integrationId, `groupRef=${hub.groupRef}`), {
      body: { objectName: 'contacts', fieldFilters: [{ fieldName: 'shoe_size', operator: 'eq', value: 42 }] },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.context).toMatchObject({ provider: 'hubspot', providerStatus: 400 });
  });

  it('maps a HubSpot outage to 502 with retryable', async () => {
    hubspot.failNext(4, 503);
    const answer = await stack.search('POST', searchPath(hub.integrationId, `groupRef=${hub.groupRef}`), {
      body: {
        objectName: 'contacts',
        fieldFilters: [{ fieldName: 'firstname', operator: 'eq', value: 'Alan' }],
      },
    });
    expect(answer.status).toBe(502);
    expect(answer.body.retryable).toBe(true);
  }, 60_000);
});

describe('search on Pipedrive (one exact term, each page read whole by id)', () => {
  let pipe: ReadFixture;
  const tag = randomUUID().slice(0, 8);
  const wanted = `grace-${tag}@example.com`;
  let ids: string[];
  const path = () => searchPath(pipe.integrationId, `groupRef=${pipe.groupRef}`);
  const byEmail = (value: string, extra: Record<string, unknown> = {}) => ({
    body: {
      objectName: 'persons',
      fieldFilters: [{ fieldName: 'contactEmails', operator: 'eq', value }],
      ...extra,
    },
  });

  beforeAll(async () => {
    pipe = await createReadFixture(stack, {
      provider: 'pipedrive',
      objectName: 'persons',
      credentials: { oauth2AuthorizationCode: { accessToken: pipedrive.credential, refreshToken: 'r-1' } },
      declared: {
        requiredFields: [{ fieldName: 'name' }],
        optionalFields: [{ fieldName: 'emails', mapToName: 'contactEmails' }, { fieldName: 'org_id' }],
      },
      configured: { selectedFields: { emails: true } },
    });
    ids = pipedrive.seed('persons', [Date.now() - 3000, Date.now() - 2000, Date.now() - 1000]);
    const emails = [wanted, `GRACE-${tag}@example.com`, wanted];
    for (const [index, id] of ids.entries()) {
      Object.assign(pipedrive.stored('persons', id)!, {
        name: `Grace ${index}`,
        org_id: 7,
        emails: [{ value: emails[index], primary: true, label: 'work' }],
      });
    }
  });

  it('answers whole records matching exactly, with the installation’s selection and mapping, a page at a time', async () => {
    const before = pipedrive.requests.length;
    const first = await stack.search('POST', path(), byEmail(wanted, { pageSize: 1 }));
    expect(first.status).toBe(200);
    expect(first.body.result).toHaveLength(1);
    const [record] = first.body.result;
    // name is required, emails selected and mapped; org_id is not selected, so only raw has it.
    expect(record.fields).toEqual({ name: 'Grace 0' });
    expect(record.mappedFields).toEqual({
      contactEmails: [{ value: wanted, primary: true, label: 'work' }],
    });
    // The whole record (update_time, org_id), not the search's reduced item.
    expect(record.raw).toMatchObject({ id: Number(ids[0]), org_id: 7, update_time: expect.any(String) });
    const sent = pipedrive.requests.slice(before);
    expect(sent.map((r) => r.path)).toEqual(['/api/v2/persons/search', '/api/v2/persons']);
    expect(sent[0].query).toMatchObject({ term: wanted, fields: 'email', exact_match: 'true', limit: '1' });
    expect(sent[1].query).toMatchObject({ ids: ids[0] });

    // Pipedrive's exact match ignores case: the upper-case address is found there and left out here.
    const rest = [];
    let token: string | undefined = first.body.nextPageToken;
    for (let pages = 0; token && pages < 5; pages++) {
      const page = await stack.search('POST', path(), byEmail(wanted, { pageSize: 1, pageToken: token }));
      expect(page.status).toBe(200);
      rest.push(...page.body.result);
      token = page.body.nextPageToken;
    }
    expect(token).toBeUndefined();
    expect(rest.map((found: any) => found.fields.name)).toEqual(['Grace 2']);
  });

  it('answers an empty page when nothing matches', async () => {
    const found = await stack.search('POST', path(), byEmail(`nobody-${tag}@example.com`));
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ result: [] });
  });

  it('refuses a second filter with 400: Pipedrive searches one term', async () => {
    const answer = await stack.search('POST', path(), {
      body: {
        objectName: 'persons',
        fieldFilters: [
          { fieldName: 'contactEmails', operator: 'eq', value: wanted },
          { fieldName: 'name', operator: 'eq', value: 'Grace 0' },
        ],
      },
    });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.body.detail).toContain('takes one filter on "term"');
  });
});
