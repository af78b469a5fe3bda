import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Sandbox } from '../../src/sandbox/index.js';
import { PublicApi } from '../support/public-api.js';
import { createTestProject, type TestStack } from '../support/stack.js';
import { createIntegration, generateConnection, startStackWithSandbox } from './api-helpers.js';

let stack: TestStack;
let sandbox: Sandbox;
let p: string;
let integration: { id: string; latestRevision: { id: string } };
let apiKeyConnection: { id: string };

beforeAll(async () => {
  ({ stack, sandbox } = await startStackWithSandbox());
  p = `/projects/${stack.project.name}`;
  apiKeyConnection = await generateConnection(stack, {
    provider: 'sandboxApiKey',
    groupRef: 'acme',
    apiKey: 'sandbox-demo-key',
  });
  integration = await createIntegration(stack, 'crm', 'sandboxApiKey', {
    read: [
      {
        objectName: 'contacts',
        mapToName: 'people',
        mapToDisplayName: 'People',
        requiredFields: [{ fieldName: 'email', mapToName: 'mail', mapToDisplayName: 'Mail' }],
        optionalFields: [{ mapToName: 'priority', prompt: 'Which field?' }],
      },
      { objectName: 'widgets' },
      { objectName: 'deals' },
    ],
    write: [{ objectName: 'deals' }, { objectName: 'gadgets' }],
  });
});
afterAll(async () => {
  await stack.close();
  await sandbox.close();
});
afterEach(() => sandbox.reset());

const hydratePath = (connectionId: string, revisionId = integration.latestRevision.id, name = 'crm') =>
  `${p}/integrations/${name}/revisions/${revisionId}:hydrate?connectionId=${connectionId}`;

describe('GET /projects/{p}/integrations/{i}/revisions/{revisionId}:hydrate', () => {
  it('enriches read objects with field metadata and write objects with display names', async () => {
    const response = await stack.api('GET', hydratePath(apiKeyConnection.id));
    expect(response.status).toBe(200);
    const { content } = response.body;
    expect(response.body).toMatchObject({ id: integration.latestRevision.id, specVersion: '1.0.0' });
    expect(content).toMatchObject({ name: 'crm', provider: 'sandboxApiKey' });

    const [contacts, widgets, deals] = content.read.objects;
    expect(contacts).toMatchObject({ objectName: 'contacts', mapToName: 'people', displayName: 'People' });
    expect(contacts.error).toBeUndefined();
    expect(contacts.allFieldsMetadata.email).toEqual({
      fieldName: 'email',
      displayName: 'Email',
      valueType: 'string',
      providerType: 'email',
      readOnly: false,
      isCustom: false,
      isRequired: true,
    });
    expect(contacts.allFieldsMetadata.lifecycleStage.values).toContainEqual({
      value: 'lead',
      displayValue: 'Lead',
    });
    expect(contacts.allFields).toContainEqual({
      fieldName: 'email',
      displayName: 'Email',
      mapToName: 'mail',
      mapToDisplayName: 'Mail',
    });
    expect(contacts.allFields).toContainEqual({ fieldName: 'firstName', displayName: 'First name' });
    expect(contacts.allFields).toHaveLength(Object.keys(contacts.allFieldsMetadata).length);

    expect(widgets).toMatchObject({
      objectName: 'widgets',
      displayName: 'widgets',
      allFields: [],
      allFieldsMetadata: {},
    });
    expect(widgets.error).toMatch(/widgets/);
    expect(deals).toMatchObject({ displayName: 'Deals' });
    expect(Object.keys(deals.allFieldsMetadata)).toContain('amount');

    expect(content.write.objects).toEqual([
      { objectName: 'deals', displayName: 'Deals' },
      { objectName: 'gadgets', displayName: 'gadgets' },
    ]);
  });

  it('names the display name of each declared provider field, as the public hydrated shape requires', async () => {
    const response = await stack.api('GET', hydratePath(apiKeyConnection.id));
    const [contacts, widgets] = response.body.content.read.objects;
    expect(contacts.requiredFields).toEqual([
      { fieldName: 'email', displayName: 'Email', mapToName: 'mail', mapToDisplayName: 'Mail' },
    ]);
    // A mapping field names no provider field: it stays as declared.
    expect(contacts.optionalFields).toEqual([{ mapToName: 'priority', prompt: 'Which field?' }]);
    expect(widgets.requiredFields).toBeUndefined();
    expect(new PublicApi().checkResponse('api', 'GET', hydratePath(apiKeyConnection.id), response)).toEqual(
      [],
    );
  });

  it('names a field the provider could not describe by its field name', async () => {
    await createIntegration(stack, 'unknown-object', 'sandboxApiKey', {
      read: [{ objectName: 'widgets', requiredFields: [{ fieldName: 'size' }] }],
    });
    const revision = (await stack.api('GET', `${p}/integrations/unknown-object`)).body.latestRevision.id;
    const response = await stack.api('GET', hydratePath(apiKeyConnection.id, revision, 'unknown-object'));
    expect(response.status).toBe(200);
    const [widgets] = response.body.content.read.objects;
    expect(widgets.error).toMatch(/widgets/);
    expect(widgets.requiredFields).toEqual([{ fieldName: 'size', displayName: 'size' }]);
  });

  it('works with an OAuth connection whose token expired, refreshing it', async () => {
    const client = sandbox.registerClient({ name: 'hydrate tests' });
    await createIntegration(stack, 'oauth-crm', 'sandbox', {
      read: [{ objectName: 'contacts' }, { objectName: 'companies' }],
    });
    const connection = await generateConnection(stack, {
      provider: 'sandbox',
      groupRef: 'beta',
      oauth2ClientCredentials: {
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        scopes: ['contacts.read'],
      },
    });
    sandbox.faults.set({ expireAccessTokens: true });
    const integrationBody = (await stack.api('GET', `${p}/integrations/oauth-crm`)).body;
    const response = await stack.api(
      'GET',
      hydratePath(connection.id, integrationBody.latestRevision.id, 'oauth-crm'),
    );
    expect(response.status).toBe(200);
    const [contacts, companies] = response.body.content.read.objects;
    expect(contacts.displayName).toBe('Contacts');
    expect(contacts.error).toBeUndefined();
    // The token carries no companies scope: that object alone fails, with the provider's reason.
    expect(companies.error).toMatch(/companies\.read/);
    expect(sandbox.faults.stats.tokensIssued).toBe(2); // the connection’s token, then the refreshed one
  });

  it('fails as a whole, 502, when the provider refuses the connection’s credentials', async () => {
    const bad = await generateConnection(stack, {
      provider: 'sandboxApiKey',
      groupRef: 'gamma',
      apiKey: 'wrong-key-123',
    });
    const response = await stack.api('GET', hydratePath(bad.id));
    expect(response.status).toBe(502);
    expect(response.body).toMatchObject({ retryable: false, context: { providerStatus: 401 } });
    expect(JSON.stringify(response.body)).not.toContain('wrong-key-123');
  });

  it('answers 400 for a connection to another provider', async () => {
    const stripe = await generateConnection(stack, {
      provider: 'stripe',
      groupRef: 'acme',
      apiKey: 'sk_test_1',
    });
    const response = await stack.api('GET', hydratePath(stripe.id));
    expect(response.status).toBe(400);
    expect(response.body.issues).toMatchObject([
      expect.objectContaining({ in: 'query', name: 'connectionId', value: stripe.id }),
    ]);
  });

  it('answers 404 for a connection of another project', async () => {
    const other = await createTestProject();
    const foreign = await generateConnection(
      stack,
      { provider: 'sandboxApiKey', groupRef: 'acme', apiKey: 'sandbox-demo-key' },
      other.apiKey,
      other.name,
    );
    const response = await stack.api('GET', hydratePath(foreign.id));
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/problem\+json/);
  });

  it('answers 404 for unknown connections, revisions and integrations', async () => {
    expect((await stack.api('GET', hydratePath('not-a-uuid'))).status).toBe(404);
    expect((await stack.api('GET', hydratePath('00000000-0000-4000-8000-000000000000'))).status).toBe(404);
    expect(
      (await stack.api('GET', hydratePath(apiKeyConnection.id, '00000000-0000-4000-8000-000000000000')))
        .status,
    ).toBe(404);
    expect(
      (await stack.api('GET', hydratePath(apiKeyConnection.id, integration.latestRevision.id, 'nope')))
        .status,
    ).toBe(404);
  });

  it('requires connectionId', async () => {
    const response = await stack.api(
      'GET',
      `${p}/integrations/crm/revisions/${integration.latestRevision.id}:hydrate`,
    );
    expect(response.status).toBe(400);
    expect(response.body.issues).toMatchObject([
      expect.objectContaining({ in: 'query', name: 'connectionId' }),
    ]);
  });
});
