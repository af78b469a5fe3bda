import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Sandbox } from '../../src/sandbox/index.js';
import type { TestStack } from '../support/stack.js';
import { createIntegration, generateConnection, startStackWithSandbox } from './api-helpers.js';

let stack: TestStack;
let sandbox: Sandbox;
let p: string;

beforeAll(async () => {
  ({ stack, sandbox } = await startStackWithSandbox());
  p = `/projects/${stack.project.name}`;
  await generateConnection(stack, {
    provider: 'sandboxApiKey',
    groupRef: 'acme',
    apiKey: 'sandbox-demo-key',
  });
  // OpenAI stays catalog-only (no declaration): it can describe nothing and create no custom fields.
  await generateConnection(stack, { provider: 'openAI', groupRef: 'acme', apiKey: 'sk-test-123' });
  await createIntegration(stack, 'crm', 'sandboxApiKey', {
    read: [
      { objectName: 'contacts', mapToName: 'people', mapToDisplayName: 'People' },
      { objectName: 'companies' },
    ],
  });
});
afterAll(async () => {
  await stack.close();
  await sandbox.close();
});
afterEach(() => sandbox.reset({ data: true }));

function expectProblem(response: { status: number; body: any; headers: Headers }, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(response.body.status).toBe(status);
}

describe('GET /projects/{p}/providers/{provider}/objects/{objectName}/metadata', () => {
  const path = (provider: string, object: string, query = 'groupRef=acme') =>
    `${p}/providers/${provider}/objects/${object}/metadata?${query}`;

  it('describes the object’s fields through the group’s connection', async () => {
    const response = await stack.api('GET', path('sandboxApiKey', 'companies'));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: 'companies', displayName: 'Companies' });
    expect(response.body.mappedObjectName).toBeUndefined();
    expect(response.body.fields.employees).toEqual({
      fieldName: 'employees',
      displayName: 'Employees',
      valueType: 'int',
      providerType: 'integer',
      readOnly: false,
      isCustom: false,
      isRequired: false,
    });
    expect(response.body.fields.id.readOnly).toBe(true);
  });

  it('accepts the name an integration maps the object to', async () => {
    const response = await stack.api('GET', path('sandboxApiKey', 'people'));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: 'contacts', mappedObjectName: 'people' });
    expect(response.body.fields.email.isRequired).toBe(true);
  });

  it('leaves read-only fields out with excludeReadOnly=true', async () => {
    const response = await stack.api(
      'GET',
      path('sandboxApiKey', 'contacts', 'groupRef=acme&excludeReadOnly=true'),
    );
    expect(response.status).toBe(200);
    expect(Object.keys(response.body.fields)).not.toEqual(expect.arrayContaining(['id']));
    expect(Object.values(response.body.fields).some((field: any) => field.readOnly)).toBe(false);
    expect(response.body.fields.email).toBeDefined();
  });

  it('requires groupRef', async () => {
    const response = await stack.api('GET', path('sandboxApiKey', 'contacts', ''));
    expectProblem(response, 400);
    expect(response.body.issues).toMatchObject([expect.objectContaining({ in: 'query', name: 'groupRef' })]);
  });

  it('answers 404 for a provider outside the catalog', async () => {
    const response = await stack.api('GET', path('nope', 'contacts'));
    expectProblem(response, 404);
    expect(response.body.detail).toMatch(/"nope" is not in Ferry/);
  });

  it('answers 404 when the group has no connection to the provider', async () => {
    const response = await stack.api('GET', path('sandboxApiKey', 'contacts', 'groupRef=nobody'));
    expectProblem(response, 404);
    expect(response.body.detail).toBe('Group "nobody" has no sandboxApiKey connection.');
  });

  it('answers 404 for an object the provider does not have', async () => {
    const response = await stack.api('GET', path('sandboxApiKey', 'widgets'));
    expectProblem(response, 404);
    expect(response.body.context).toMatchObject({ provider: 'sandboxApiKey', providerStatus: 404 });
  });

  it('answers 422 naming a provider that cannot describe objects', async () => {
    const response = await stack.api('GET', path('openAI', 'models'));
    expectProblem(response, 422);
    expect(response.body.detail).toBe('Provider "openAI" does not support describing objects in Ferry.');
  });

  it('answers 502, retryable, when the provider keeps failing', async () => {
    sandbox.faults.set({ errorRate: 1 });
    const response = await stack.api('GET', path('sandboxApiKey', 'contacts'));
    expectProblem(response, 502);
    expect(response.body).toMatchObject({ retryable: true, context: { providerStatus: 500 } });
    expect(JSON.stringify(response.body)).not.toContain('sandbox-demo-key');
  });

  it('is scoped to the project: another project’s key sees nothing', async () => {
    const { createTestProject } = await import('../support/stack.js');
    const other = await createTestProject();
    const response = await stack.api('GET', path('sandboxApiKey', 'contacts'), { apiKey: other.apiKey });
    expect(response.status).toBe(404);
  });
});

describe('GET /projects/{p}/integrations/{i}/objects/{objectName}/metadata', () => {
  const path = (object: string, query = 'groupRef=acme', integration = 'crm') =>
    `${p}/integrations/${integration}/objects/${object}/metadata?${query}`;

  it('resolves the mapped name from the latest revision', async () => {
    const response = await stack.api('GET', path('people'));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      name: 'contacts',
      displayName: 'Contacts',
      mappedObjectName: 'people',
    });
  });

  it('reports the mapping when asked by the provider’s name too', async () => {
    const response = await stack.api('GET', path('contacts', 'groupRef=acme&excludeReadOnly=true'));
    expect(response.body).toMatchObject({ name: 'contacts', mappedObjectName: 'people' });
    expect(response.body.fields.createdAt).toBeUndefined();
  });

  it('answers 404 for an unknown integration, and for a group without a connection', async () => {
    expectProblem(await stack.api('GET', path('people', 'groupRef=acme', 'missing')), 404);
    expectProblem(await stack.api('GET', path('people', 'groupRef=other')), 404);
  });
});

describe('PUT /projects/{p}/providers/{provider}/object-metadata', () => {
  const path = (provider = 'sandboxApiKey') => `${p}/providers/${provider}/object-metadata`;

  it('creates custom fields, then updates them', async () => {
    const body = {
      groupRef: 'acme',
      fields: {
        contacts: [
          {
            fieldName: 'tier',
            displayName: 'Tier',
            valueType: 'singleSelect',
            stringOptions: { values: ['gold', 'silver'] },
          },
          {
            fieldName: 'nickname',
            displayName: 'Nickname',
            valueType: 'string',
            stringOptions: { length: 40 },
          },
        ],
      },
    };
    const first = await stack.api('PUT', path(), { body });
    expect(first.status).toBe(200);
    expect(first.body.success).toBe(true);
    expect(first.body.fields.contacts.tier).toMatchObject({
      fieldName: 'tier',
      action: 'create',
      metadata: { valueType: 'singleSelect', isCustom: true },
    });
    expect(first.body.fields.contacts.nickname.action).toBe('create');

    const second = await stack.api('PUT', path(), {
      body: {
        groupRef: 'acme',
        fields: { contacts: [{ fieldName: 'tier', displayName: 'Level', valueType: 'string' }] },
      },
    });
    expect(second.body.fields.contacts.tier).toMatchObject({
      action: 'update',
      metadata: { displayName: 'Level' },
    });

    const metadata = await stack.api(
      'GET',
      `${p}/providers/sandboxApiKey/objects/contacts/metadata?groupRef=acme`,
    );
    expect(metadata.body.fields.tier).toMatchObject({ displayName: 'Level', isCustom: true });
  });

  it('takes groupRef from the query too, and mapped object names', async () => {
    const response = await stack.api('PUT', `${path()}?groupRef=acme`, {
      body: { fields: { people: [{ fieldName: 'score', displayName: 'Score', valueType: 'float' }] } },
    });
    expect(response.status).toBe(200);
    expect(response.body.fields.people.score.action).toBe('create');
    const metadata = await stack.api(
      'GET',
      `${p}/providers/sandboxApiKey/objects/contacts/metadata?groupRef=acme`,
    );
    expect(metadata.body.fields.score.valueType).toBe('float');
  });

  it('answers 400 with an issue per invalid definition, changing nothing', async () => {
    const response = await stack.api('PUT', path(), {
      body: {
        groupRef: 'acme',
        fields: {
          contacts: [
            { fieldName: 'a', displayName: 'A', valueType: 'color' },
            { fieldName: 'b', displayName: 'B', valueType: 'singleSelect' },
            { fieldName: 'c', displayName: 'C', valueType: 'int', stringOptions: { length: 3 } },
            { fieldName: 'c', displayName: 'C', valueType: 'int' },
            { fieldName: '1x', displayName: 'X', valueType: 'string' },
          ],
        },
      },
    });
    expectProblem(response, 400);
    const names = response.body.issues.map((issue: { name: string }) => issue.name);
    expect(names).toEqual(
      expect.arrayContaining(['fields.contacts[0].valueType', 'fields.contacts[4].fieldName']),
    );
    expect(sandbox.faults.stats.apiRequests).toBe(0);

    const rules = await stack.api('PUT', path(), {
      body: {
        groupRef: 'acme',
        fields: {
          contacts: [
            { fieldName: 'b', displayName: 'B', valueType: 'singleSelect' },
            { fieldName: 'c', displayName: 'C', valueType: 'int', stringOptions: { length: 3 } },
            { fieldName: 'c', displayName: 'C', valueType: 'int' },
          ],
        },
      },
    });
    expectProblem(rules, 400);
    expect(rules.body.issues.map((issue: { name: string }) => issue.name)).toEqual([
      'fields.contacts[0].stringOptions.values',
      'fields.contacts[1].stringOptions',
      'fields.contacts[2].fieldName',
    ]);
    expect(sandbox.faults.stats.apiRequests).toBe(0);
  });

  it('requires groupRef and at least one object', async () => {
    const missing = await stack.api('PUT', path(), { body: { fields: { contacts: [] } } });
    expectProblem(missing, 400);
    const empty = await stack.api('PUT', path(), { body: { groupRef: 'acme', fields: {} } });
    expectProblem(empty, 400);
    expect(empty.body.issues[0]).toMatchObject({ name: 'fields' });
  });

  it('answers 422 naming a provider without custom fields', async () => {
    const response = await stack.api('PUT', path('openAI'), {
      body: {
        groupRef: 'acme',
        fields: { models: [{ fieldName: 'x', displayName: 'X', valueType: 'string' }] },
      },
    });
    expectProblem(response, 422);
    expect(response.body.detail).toBe('Provider "openAI" does not support creating custom fields in Ferry.');
  });

  it('answers 422 with the provider’s reason when it refuses a definition', async () => {
    const response = await stack.api('PUT', path(), {
      body: {
        groupRef: 'acme',
        fields: { contacts: [{ fieldName: 'email', displayName: 'E', valueType: 'string' }] },
      },
    });
    expectProblem(response, 422);
    expect(response.body.context).toMatchObject({ provider: 'sandboxApiKey', providerStatus: 400 });
  });

  it('answers 404 for an unknown provider or a group without a connection', async () => {
    const body = {
      groupRef: 'acme',
      fields: { contacts: [{ fieldName: 'x', displayName: 'X', valueType: 'string' }] },
    };
    expectProblem(await stack.api('PUT', path('nope'), { body }), 404);
    expectProblem(await stack.api('PUT', path(), { body: { ...body, groupRef: 'nobody' } }), 404);
  });
});

describe('PUT /projects/{p}/integrations/{i}/object-metadata', () => {
  it('upserts custom fields of mapped objects through the group’s connection', async () => {
    const response = await stack.api('PUT', `${p}/integrations/crm/object-metadata`, {
      body: {
        groupRef: 'acme',
        fields: { people: [{ fieldName: 'vip', displayName: 'VIP', valueType: 'boolean', required: false }] },
      },
    });
    expect(response.status).toBe(200);
    expect(response.body.fields.people.vip).toMatchObject({
      action: 'create',
      metadata: { valueType: 'boolean' },
    });
  });

  it('answers 404 for an unknown integration and 400 for a body that does not validate', async () => {
    expectProblem(
      await stack.api('PUT', `${p}/integrations/missing/object-metadata`, {
        body: {
          groupRef: 'acme',
          fields: { contacts: [{ fieldName: 'x', displayName: 'X', valueType: 'string' }] },
        },
      }),
      404,
    );
    const invalid = await stack.api('PUT', `${p}/integrations/crm/object-metadata`, {
      body: { groupRef: 'acme', fields: { contacts: [{ fieldName: 'x' }] }, extra: true },
    });
    expectProblem(invalid, 400);
    expect(invalid.body.issues.map((issue: { name: string }) => issue.name)).toEqual(
      expect.arrayContaining(['extra', 'fields.contacts[0].displayName', 'fields.contacts[0].valueType']),
    );
  });
});
