/**
 * Ferry against the public service's own OpenAPI documents (test/fixtures/public-api): every
 * operation they describe, and every message kind a webhook destination receives, is driven for
 * real here and its answer checked with a JSON Schema validator (Ajv) the way a strict generated
 * client reads it. An answer such a client would refuse fails this file. Requests are checked too,
 * so the scenario speaks as a public client does. Operations of the hosted service that Ferry does
 * not have (billing, claimed domains, upload URLs) must answer a clear 501 problem. Where the public
 * documents cannot describe Ferry, the reader widens them, each case named (`documentedGaps`); the
 * `schema.watch` message is not checked here (README, "Compatibility with the public API").
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { recordSchedulePaused, recordSubscriptionFailure } from '../../activities/installation.js';
import { hostedOnlyRoutes } from '../../src/api/hosted-only.js';
import { config, resetConfig } from '../../src/config.js';
import { transaction } from '../../src/db/orm.js';
import { findOrCreateBuilder, issueBuilderToken } from '../../src/domain/builder-tokens.js';
import { devClient, startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { PublicApi, type OperationRef, type PublicHost } from '../support/public-api.js';
import { request, startTestStack, type ApiResponse, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { consent } from '../oauth/helpers.js';

const publicApi = new PublicApi();
/** Operations the public document describes that belong to the hosted service alone (answered 501). */
const hostedOnly = hostedOnlyRoutes.map((route) => route.operationId);

let sandbox: Sandbox;
let stack: TestStack;
let receiver: WebhookReceiver;
let p: string;

/** Each public operation a success (2xx) was seen of, and everything found wrong along the way. */
const succeeded = new Set<string>();
const problems = new Set<string>();

interface Call {
  body?: unknown;
  apiKey?: string;
  bearer?: string;
  headers?: Record<string, string>;
}

/**
 * One request as a public client makes it: its body checked against the public request schema,
 * its answer against the public response schema. Ferry's own operations pass unchecked.
 */
async function call(host: PublicHost, method: string, path: string, options: Call = {}) {
  const operation = publicApi.operationFor(host, method, path);
  const response = await request(method, `${stack.urls[host]}${path}`, {
    ...(options.bearer ? {} : { apiKey: options.apiKey ?? stack.project.apiKey }),
    ...options,
  });
  const found = operation ? check(operation, options.body, response) : [];
  for (const problem of found) problems.add(problem);
  if (operation && response.status < 300) succeeded.add(operation.operationId);
  return Object.assign(response, { problems: found });
}

function check(operation: OperationRef, sent: unknown, response: ApiResponse): string[] {
  return [
    ...publicApi.checkRequest(operation, sent),
    ...publicApi.checkAnswer(operation, {
      status: response.status,
      contentType: response.headers.get('content-type'),
      body: response.body,
    }),
  ];
}

const api = (method: string, path: string, options?: Call) => call('api', method, path, options);

/** The status expected, and nothing a strict client would refuse. */
function expectAnswer(response: Awaited<ReturnType<typeof call>>, status: number) {
  expect({
    status: response.status,
    problems: response.problems,
    // An unexpected status shows what was answered.
    ...(response.status !== status && { body: response.body }),
  }).toEqual({ status, problems: [] });
}

async function eventually<T>(probe: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function builderToken(email = `builder-${randomUUID().slice(0, 8)}@example.com`) {
  return transaction(async (em) => {
    const builder = await findOrCreateBuilder(em, email);
    return {
      id: builder.id,
      email: builder.email,
      token: await issueBuilderToken(builder, config().builderTokenSecret),
    };
  });
}

const records = () => receiver.accepted().filter((received) => received.path === '/records');
const notifications = () => receiver.accepted().filter((received) => received.path === '/notifications');
const notified = (type: string) =>
  notifications().filter((received) => received.body.notificationType === type);

const manifest = `specVersion: 1.0.0
integrations:
  - name: crm
    provider: sandboxApiKey
    read:
      objects:
        - objectName: contacts
          destination: records
          schedule: "0 0 1 1 *"
          requiredFields:
            - fieldName: email
          optionalFields:
            - fieldName: firstName
            - fieldName: lastName
              mapToName: surname
              mapToDisplayName: Surname
            - mapToName: priority
          backfill:
            defaultPeriod:
              fullHistory: true
        - objectName: deals
          destination: records
          schedule: "0 0 1 1 *"
          delivery:
            mode: onRequest
    write:
      objects:
        - objectName: contacts
    subscribe:
      objects:
        - objectName: contacts
          destination: records
          inheritFieldsAndMapping: true
          createEvent:
            enabled: always
    proxy:
      enabled: true
`;

/** The installation's config as the public request describes it. */
const installConfig = {
  provider: 'sandboxApiKey',
  read: {
    objects: {
      contacts: {
        objectName: 'contacts',
        schedule: '0 0 1 1 *',
        destination: 'records',
        selectedFields: { email: true, firstName: true, lastName: true },
        selectedFieldMappings: { surname: 'lastName' },
        backfill: { defaultPeriod: { fullHistory: true } },
      },
      deals: {
        objectName: 'deals',
        schedule: '0 0 1 1 *',
        destination: 'records',
        selectedFields: { name: true },
        selectedFieldMappings: {},
      },
    },
  },
  write: { objects: { contacts: { objectName: 'contacts' } } },
  subscribe: {
    objects: {
      contacts: {
        objectName: 'contacts',
        destination: 'records',
        inheritFieldsAndMappings: true,
        createEvent: { enabled: 'always' },
      },
    },
  },
  proxy: { enabled: true },
};

const state: {
  integrationId?: string;
  revisionId?: string;
  installationId?: string;
  connectionId?: string;
  backfillOperationId?: string;
} = {};

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 60, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  // The OAuth callback and the change-event URL registered at the sandbox name this api listener.
  process.env.FERRY_PUBLIC_API_URL = new URL(stack.urls.api).origin;
  resetConfig();
  receiver = await WebhookReceiver.start();
  p = `/projects/${stack.project.name}`;
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.stop();
  await sandbox?.close();
  delete process.env.FERRY_SANDBOX_URL;
  delete process.env.FERRY_PUBLIC_API_URL;
  resetConfig();
});

describe('Ferry against the public documents', () => {
  it('providers: the catalog and one provider', async () => {
    expectAnswer(await api('GET', '/providers'), 200);
    expectAnswer(await api('GET', '/providers/sandbox'), 200);
    expectAnswer(await api('GET', '/providers/discourse'), 200);
  });

  it('destinations, topics and notification routes, every public event type routed', async () => {
    const made = await api('POST', `${p}/destinations`, {
      body: { name: 'records', type: 'webhook', metadata: { url: receiver.url('/records') } },
    });
    expectAnswer(made, 201);
    const hooks = await api('POST', `${p}/destinations`, {
      body: { name: 'notifications', type: 'webhook', metadata: { url: receiver.url('/notifications') } },
    });
    expectAnswer(hooks, 201);
    const spare = await api('POST', `${p}/destinations`, {
      body: { name: 'spare', type: 'webhook', metadata: { url: receiver.url('/spare') } },
    });
    expectAnswer(spare, 201);
    expectAnswer(await api('GET', `${p}/destinations`), 200);
    expectAnswer(await api('GET', `${p}/destinations/records`), 200);
    expectAnswer(
      await api('PATCH', `${p}/destinations/spare`, {
        body: { updateMask: ['metadata.url'], destination: { metadata: { url: receiver.url('/spare2') } } },
      }),
      200,
    );
    expectAnswer(await api('DELETE', `${p}/destinations/spare`), 204);

    const topic = await api('POST', `${p}/topics`, { body: { name: 'everything' } });
    expectAnswer(topic, 201);
    const spareTopic = await api('POST', `${p}/topics`, { body: { name: 'spare' } });
    expectAnswer(spareTopic, 201);
    expectAnswer(await api('GET', `${p}/topics`), 200);
    expectAnswer(
      await api('PATCH', `${p}/topics/${spareTopic.body.id}`, { body: { name: 'spare-renamed' } }),
      200,
    );
    for (const eventType of publicApi.notificationPayloads().keys()) {
      expectAnswer(
        await api('POST', `${p}/notification-event-topic-routes`, {
          body: { eventType, topicId: topic.body.id },
        }),
        201,
      );
    }
    const spareRoute = await api('POST', `${p}/notification-event-topic-routes`, {
      body: { eventType: 'installation.created', topicId: spareTopic.body.id },
    });
    expectAnswer(spareRoute, 201);
    expectAnswer(await api('GET', `${p}/notification-event-topic-routes`), 200);
    expectAnswer(await api('DELETE', `${p}/notification-event-topic-routes/${spareRoute.body.id}`), 204);

    const route = await api('POST', `${p}/topic-destination-routes`, {
      body: { topicId: topic.body.id, destinationId: hooks.body.id },
    });
    expectAnswer(route, 201);
    // A destination that answers 410 Gone is disabled at its first delivery: destination.webhook.disabled.
    receiver.respond((received) => ({ status: received.path === '/gone' ? 410 : 200 }));
    const gone = await api('POST', `${p}/destinations`, {
      body: { name: 'gone', type: 'webhook', metadata: { url: receiver.url('/gone') } },
    });
    expectAnswer(gone, 201);
    expectAnswer(
      await api('POST', `${p}/topic-destination-routes`, {
        body: { topicId: topic.body.id, destinationId: gone.body.id },
      }),
      201,
    );
    const spareDestinationRoute = await api('POST', `${p}/topic-destination-routes`, {
      body: { topicId: spareTopic.body.id, destinationId: hooks.body.id },
    });
    expectAnswer(spareDestinationRoute, 201);
    expectAnswer(await api('GET', `${p}/topic-destination-routes`), 200);
    expectAnswer(await api('DELETE', `${p}/topic-destination-routes/${spareDestinationRoute.body.id}`), 204);
    expectAnswer(await api('DELETE', `${p}/topics/${spareTopic.body.id}`), 204);
  });

  it('integrations: batch deploy, create, revisions, list, get and delete', async () => {
    const deployed = await api('PUT', `${p}/integrations:batch`, { body: { sourceYaml: manifest } });
    expectAnswer(deployed, 200);
    const crm = (deployed.body as { name: string; id: string; latestRevision: { id: string } }[]).find(
      (integration) => integration.name === 'crm',
    )!;
    state.integrationId = crm.id;
    const revision = await api('POST', `${p}/integrations/${crm.id}/revisions`, {
      body: { sourceYaml: manifest.replace('0 0 1 1 *', '0 0 1 2 *') },
    });
    expectAnswer(revision, 201);
    state.revisionId = revision.body.id;
    const other = await api('POST', `${p}/integrations`, {
      body: {
        name: 'other',
        provider: 'sandboxApiKey',
        latestRevision: {
          specVersion: '1.0.0',
          content: { name: 'other', provider: 'sandboxApiKey', proxy: { enabled: true } },
        },
      },
    });
    expectAnswer(other, 201);
    expectAnswer(await api('GET', `${p}/integrations`), 200);
    expectAnswer(await api('GET', `${p}/integrations/${crm.id}`), 200);
    expectAnswer(await api('DELETE', `${p}/integrations/${other.body.id}`), 204);
  });

  it('connections: generate, list, get, update, delete; custom auth connects like the components do', async () => {
    const generated = await api('POST', `${p}/connections:generate`, {
      body: {
        provider: 'sandboxApiKey',
        groupRef: 'acme',
        groupName: 'Acme Inc.',
        consumerRef: 'ada',
        consumerName: 'Ada Lovelace',
        apiKey: 'sandbox-demo-key',
      },
    });
    expectAnswer(generated, 201);
    state.connectionId = generated.body.id;
    expectAnswer(await api('GET', `${p}/connections?provider=sandboxApiKey&groupRef=acme`), 200);
    expectAnswer(await api('GET', `${p}/connections/${generated.body.id}?includeCreds=true`), 200);
    expectAnswer(
      await api('PATCH', `${p}/connections/${generated.body.id}`, {
        body: { updateMask: ['apiKey'], connection: { apiKey: 'sandbox-demo-key' } },
      }),
      200,
    );

    const custom = await api('POST', '/custom-auth/connect', {
      body: {
        projectIdOrName: stack.project.name,
        provider: 'clariCopilot',
        groupRef: 'calls',
        groupName: 'Calls',
        consumerRef: 'ada',
        consumerName: 'Ada Lovelace',
        customAuth: { apiKey: 'clari-key', apiPassword: 'clari-password' },
      },
    });
    expectAnswer(custom, 200);
    expect(custom.body.connection).toMatchObject({ provider: 'clariCopilot', group: { groupRef: 'calls' } });
    expectAnswer(await api('DELETE', `${p}/connections/${custom.body.connection.id}`), 204);
  });

  it('OAuth: provider apps, the authorization URL as text, the connection it makes, re-authorization', async () => {
    const app = await api('POST', `${p}/provider-apps`, {
      body: {
        provider: 'sandbox',
        clientId: devClient.clientId,
        clientSecret: devClient.clientSecret,
        scopes: ['contacts.read', 'contacts.write'],
      },
    });
    expectAnswer(app, 200);
    expect(app.body.scopes).toEqual(['contacts.read', 'contacts.write']);
    expectAnswer(await api('GET', `${p}/provider-apps`), 200);
    expectAnswer(
      await api('PATCH', `${p}/provider-apps/${app.body.id}`, {
        body: { updateMask: ['externalRef'], providerApp: { externalRef: 'crm-app' } },
      }),
      200,
    );
    const spare = await api('POST', `${p}/provider-apps`, {
      body: { provider: 'sandbox', clientId: 'spare-client', clientSecret: 'spare-secret' },
    });
    expectAnswer(spare, 200);
    expectAnswer(await api('DELETE', `${p}/provider-apps/${spare.body.id}`), 204);

    const started = await api('POST', '/oauth-connect', {
      body: {
        projectIdOrName: stack.project.name,
        provider: 'sandbox',
        groupRef: 'acme',
        consumerRef: 'ada',
      },
    });
    expectAnswer(started, 200);
    expect(started.headers.get('content-type')).toMatch(/^text\/plain/);
    const page = await request<string>('GET', await consent(sandbox, started.body, 'approve'));
    expect(page.status).toBe(200);
    const connections = await api('GET', `${p}/connections?provider=sandbox&groupRef=acme`);
    expectAnswer(connections, 200);
    const [oauthConnection] = connections.body;
    const reauthorize = await api('PATCH', `${p}/connections/${oauthConnection.id}:oauth-update`);
    expectAnswer(reauthorize, 200);
    expect(reauthorize.headers.get('content-type')).toMatch(/^text\/plain/);
    // A renewal, then a refresh token the provider no longer honours: connection.refreshed, connection.error.
    expectAnswer(
      await api('GET', `${p}/connections/${oauthConnection.id}?includeCreds=true&refresh=force`),
      200,
    );
    sandbox.faults.set({ revokeAllTokens: true });
    const refused = await api(
      'GET',
      `${p}/connections/${oauthConnection.id}?includeCreds=true&refresh=force`,
    );
    expect(refused.status).toBeGreaterThanOrEqual(400);
    sandbox.reset();
  });

  it('installations: create, list, get, update, patch config content, list the project’s', async () => {
    const base = `${p}/integrations/${state.integrationId}/installations`;
    const created = await api('POST', base, {
      body: { groupRef: 'acme', connectionId: state.connectionId, config: { content: installConfig } },
    });
    expectAnswer(created, 201);
    state.installationId = created.body.id;
    expect(created.body.config.content.subscribe.objects.contacts.inheritFieldsAndMappings).toBe(true);
    expectAnswer(await api('GET', `${base}?groupRef=acme`), 200);
    expectAnswer(await api('GET', `${base}/${created.body.id}`), 200);
    expectAnswer(
      await api('PATCH', `${base}/${created.body.id}`, {
        body: {
          updateMask: ['config.content.read.objects.deals'],
          installation: {
            config: {
              content: {
                read: {
                  objects: {
                    deals: {
                      objectName: 'deals',
                      schedule: '0 0 1 1 *',
                      destination: 'records',
                      selectedFields: { name: true, amount: true },
                    },
                  },
                },
              },
            },
          },
        },
      }),
      200,
    );
    expectAnswer(
      await api('PATCH', `${p}/integrations/${state.integrationId}/objects/deals/config-content`, {
        body: {
          groupRef: 'acme',
          action: 'read',
          changes: [{ op: 'replace', path: '/selectedFields/amount', value: false }],
        },
      }),
      200,
    );
    expectAnswer(await api('GET', `${p}/installations?groupRef=acme`), 200);
  });

  it('hydrates a revision with the connection’s field metadata', async () => {
    const hydrated = await api(
      'GET',
      `${p}/integrations/${state.integrationId}/revisions/${state.revisionId}:hydrate?connectionId=${state.connectionId}`,
    );
    expectAnswer(hydrated, 200);
    const contacts = hydrated.body.content.read.objects.find(
      (object: any) => object.objectName === 'contacts',
    );
    expect(contacts.requiredFields).toEqual([{ fieldName: 'email', displayName: expect.any(String) }]);
  });

  it('object metadata: describe and upsert custom fields, by installation and by connection', async () => {
    expectAnswer(
      await api('GET', `${p}/integrations/${state.integrationId}/objects/contacts/metadata?groupRef=acme`),
      200,
    );
    expectAnswer(
      await api('GET', `${p}/providers/sandboxApiKey/objects/contacts/metadata?groupRef=acme`),
      200,
    );
    const field = { fieldName: 'tier', displayName: 'Tier', valueType: 'string', required: false };
    expectAnswer(
      await api('PUT', `${p}/integrations/${state.integrationId}/object-metadata`, {
        body: { groupRef: 'acme', fields: { contacts: [field] } },
      }),
      200,
    );
    expectAnswer(
      await api('PUT', `${p}/providers/sandboxApiKey/object-metadata`, {
        body: { groupRef: 'acme', fields: { contacts: [{ ...field, displayName: 'Customer tier' }] } },
      }),
      200,
    );
  });

  it('reads: the backfill, its progress, operations and logs, triggered reads, on-request pages, pausing', async () => {
    const operations = `${p}/integrations/${state.integrationId}/installations/${state.installationId}/operations`;
    const backfill = await eventually(async () => {
      const listed = await api('GET', operations);
      return listed.body.results?.find(
        (operation: any) => operation.actionType === 'read' && operation.status === 'success',
      );
    });
    state.backfillOperationId = backfill.id;
    expectAnswer(await api('GET', operations), 200);
    expectAnswer(await api('GET', `${p}/operations/${backfill.id}`), 200);
    expectAnswer(await api('GET', `${p}/operations/${backfill.id}/logs`), 200);
    const progress = await api(
      'GET',
      `${p}/integrations/${state.integrationId}/installations/${state.installationId}/objects/contacts/backfill-progress`,
    );
    expectAnswer(progress, 200);
    expect(progress.body).toMatchObject({ installationId: state.installationId, objectName: 'contacts' });

    const trigger = (objectName: string, body: Record<string, unknown>) =>
      call('read', 'POST', `${p}/integrations/${state.integrationId}/objects/${objectName}`, {
        body: { groupRef: 'acme', mode: 'async', ...body },
      });
    const since = await trigger('contacts', {
      sinceTimestamp: new Date(Date.now() - 86_400_000).toISOString(),
    });
    expectAnswer(since, 201);
    const whole = await trigger('contacts', {});
    expectAnswer(whole, 201);
    for (const operationId of [since.body.operationId, whole.body.operationId]) {
      await eventually(async () => {
        const operation = await api('GET', `${p}/operations/${operationId}`);
        return operation.body.status !== 'in_progress' && operation.body;
      });
    }
    const deals = await trigger('deals', {});
    expectAnswer(deals, 201);
    await eventually(async () => {
      const operation = await api('GET', `${p}/operations/${deals.body.operationId}`);
      return operation.body.status !== 'in_progress' && operation.body;
    });
    expectAnswer(
      await call('read', 'POST', `${p}/integrations/${state.integrationId}/objects/deals:deliverResults`, {
        body: { groupRef: 'acme', pages: 1 },
      }),
      204,
    );

    const installation = `${p}/integrations/${state.integrationId}/installations/${state.installationId}`;
    expectAnswer(await call('read', 'POST', `${installation}:pause`, { body: { objects: ['deals'] } }), 204);
    expectAnswer(
      await call('read', 'POST', `${installation}:unpause`, { body: { objects: ['deals'] } }),
      204,
    );

    // A read queued while its object is paused, whose object then leaves the config: read.triggered.error.
    expectAnswer(await call('read', 'POST', `${installation}:pause`, { body: { objects: ['deals'] } }), 204);
    const queued = await trigger('deals', { sinceTimestamp: new Date(Date.now() - 3_600_000).toISOString() });
    expectAnswer(queued, 201);
    await eventually(async () => {
      const schedule = await api('GET', `${installation}/schedule`);
      return (
        schedule.body.objects?.find((object: any) => object.objectName === 'deals')?.queuedTriggers === 1
      );
    });
    const { deals: _deals, ...readObjects } = installConfig.read.objects;
    expectAnswer(
      await api('PATCH', installation, {
        body: {
          updateMask: ['config.content.read.objects'],
          installation: { config: { content: { read: { objects: readObjects } } } },
        },
      }),
      200,
    );
    await eventually(async () => {
      const operation = await api('GET', `${p}/operations/${queued.body.operationId}`);
      return operation.body.status === 'failure' && operation.body;
    });
  }, 180_000);

  it('writes, synchronous and asynchronous, and search', async () => {
    const write = (body: Record<string, unknown>) =>
      call('write', 'POST', `${p}/integrations/${state.integrationId}/objects/contacts`, {
        body: { groupRef: 'acme', type: 'create', ...body },
      });
    const email = `grace-${randomUUID().slice(0, 8)}@example.com`;
    expectAnswer(await write({ mode: 'synchronous', record: { email, firstName: 'Grace' } }), 200);
    expectAnswer(
      await write({ mode: 'asynchronous', record: { email: `b-${email}`, firstName: 'Barbara' } }),
      200,
    );
    expectAnswer(
      await call('search', 'POST', `${p}/integrations/${state.integrationId}?groupRef=acme`, {
        body: {
          objectName: 'contacts',
          fieldFilters: [{ fieldName: 'email', operator: 'eq', value: email }],
        },
      }),
      200,
    );
  });

  it('projects, API keys and JWT keys', async () => {
    const owner = await builderToken();
    const org = await api('POST', '/orgs', { bearer: owner.token, body: { label: 'Projects org' } });
    expectAnswer(org, 201);
    const made = await api('POST', '/projects', {
      bearer: owner.token,
      body: { name: `p-${randomUUID().slice(0, 8)}`, appName: 'Ferry app', orgId: org.body.id },
    });
    expectAnswer(made, 201);
    expectAnswer(await api('GET', '/projects', { bearer: owner.token }), 200);
    expectAnswer(await api('GET', p), 200);
    expectAnswer(
      await api('PATCH', p, { body: { updateMask: ['appName'], project: { appName: 'Acme’s app' } } }),
      200,
    );

    const key = await api('POST', `${p}/api-keys`, { body: { label: 'ci' } });
    expectAnswer(key, 201);
    expectAnswer(await api('GET', `${p}/api-keys`), 200);
    expectAnswer(await api('GET', `${p}/api-keys/${key.body.id}`), 200);
    expectAnswer(
      await api('PATCH', `${p}/api-keys/${key.body.id}`, {
        body: { updateMask: ['label'], apiKey: { label: 'ci (old)' } },
      }),
      200,
    );
    expectAnswer(await api('DELETE', `${p}/api-keys/${key.body.id}`), 204);

    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwtKey = await api('POST', `${p}/jwt-keys`, {
      body: {
        label: 'backend',
        algorithm: 'RS256',
        publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      },
    });
    expectAnswer(jwtKey, 201);
    const keyId = jwtKey.body.kid;
    expectAnswer(await api('GET', `${p}/jwt-keys`), 200);
    expectAnswer(await api('GET', `${p}/jwt-keys/${keyId}`), 200);
    expectAnswer(
      await api('PATCH', `${p}/jwt-keys/${keyId}`, {
        body: { updateMask: ['active'], jwtKey: { active: false } },
      }),
      200,
    );
    expectAnswer(await api('DELETE', `${p}/jwt-keys/${keyId}`), 204);
  });

  it('orgs, their builders, invites, memberships and who is signed in', async () => {
    const owner = await builderToken();
    const org = await api('POST', '/orgs', { bearer: owner.token, body: { label: 'Acme builders' } });
    expectAnswer(org, 201);
    const orgPath = `/orgs/${org.body.id}`;
    expectAnswer(await api('GET', orgPath, { bearer: owner.token }), 200);
    expectAnswer(
      await api('PATCH', orgPath, {
        bearer: owner.token,
        body: { updateMask: ['label'], org: { label: 'Acme builders, Inc.' } },
      }),
      200,
    );
    const colleague = await builderToken();
    expectAnswer(
      await api('POST', `${orgPath}/memberships`, { bearer: owner.token, body: { builderId: colleague.id } }),
      201,
    );
    const builders = await api('GET', `${orgPath}/builders`, { bearer: owner.token });
    expectAnswer(builders, 200);
    expect(builders.body.map((builder: any) => builder.id).sort()).toEqual([owner.id, colleague.id].sort());

    const invited = await builderToken();
    const invite = await api('POST', `${orgPath}/invites`, {
      bearer: owner.token,
      body: { email: invited.email },
    });
    expectAnswer(invite, 201);
    expectAnswer(await api('GET', `${orgPath}/invites`, { bearer: owner.token }), 200);
    expectAnswer(await api('GET', `${orgPath}/invites/${invite.body.id}`, { bearer: owner.token }), 200);
    const revoked = await api('POST', `${orgPath}/invites`, {
      bearer: owner.token,
      body: { email: `someone-${randomUUID().slice(0, 8)}@example.com` },
    });
    expectAnswer(await api('DELETE', `${orgPath}/invites/${revoked.body.id}`, { bearer: owner.token }), 204);

    const accepted = await api('POST', '/invites:accept', {
      bearer: invited.token,
      body: { invitedEmail: invited.email },
    });
    expectAnswer(accepted, 200);
    expect(accepted.body.builder.id).toBe(invited.id);
    const me = await api('GET', '/my-info', { bearer: colleague.token });
    expectAnswer(me, 200);
    expect(me.body.builder).toMatchObject({ id: colleague.id, primaryEmail: colleague.email });
  });

  it('answers what only the hosted service has with a 501 problem', async () => {
    const owner = await builderToken();
    const org = await api('POST', '/orgs', { bearer: owner.token, body: { label: 'Billing org' } });
    for (const [method, path, body] of [
      ['GET', `/orgs/${org.body.id}/billingAccount`],
      ['POST', '/billingAccounts/ba-1/portalSession'],
      ['GET', '/claimed-domains?domain=example.com'],
      ['POST', '/claimed-domains', { domain: 'example.com', parentType: 'org', parentId: org.body.id }],
      ['GET', `/orgs/${org.body.id}/claimed-domains`],
      ['GET', '/generate-upload-url'],
    ] as const) {
      const response = await api(method, path, { bearer: owner.token, body });
      expect({ path, status: response.status, problems: response.problems }).toEqual({
        path,
        status: 501,
        problems: [],
      });
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(response.body.detail).toMatch(/Ferry/);
    }
  });

  it('subscribe: a change at the provider reaches the destination as a public webhook message', async () => {
    await eventually(async () => {
      const hooks = await request<any>('GET', `${sandbox.url}/api/v1/webhooks`, {
        headers: { 'x-api-key': 'sandbox-demo-key' },
      });
      return hooks.status === 200 && hooks.body.results?.length > 0;
    });
    const created = await request('POST', `${sandbox.url}/api/v1/contacts`, {
      headers: { 'x-api-key': 'sandbox-demo-key' },
      body: { email: 'hedy@example.com', firstName: 'Hedy', lastName: 'Lamarr' },
    });
    expect(created.status).toBe(201);
    await receiver.waitFor(() => records().some((message) => message.body.action === 'subscribe'), 60_000);
  }, 90_000);

  it('uninstalls, and every message kind a destination received is one the public documents describe', async () => {
    // The last kinds, from where they are recorded: a read stopped after repeated refusals, a
    // subscription the provider would not take.
    await recordSchedulePaused({
      installationId: state.installationId!,
      objectName: 'contacts',
      note: 'paused after 5 authentication failures in a row',
    });
    await recordSubscriptionFailure({
      installationId: state.installationId!,
      action: 'create',
      error: 'the provider refused the subscription',
    });
    expectAnswer(
      await api('DELETE', `${p}/integrations/${state.integrationId}/installations/${state.installationId}`),
      204,
    );

    const expected = [...publicApi.notificationPayloads().keys()];
    const unseen = () => expected.filter((type) => !notified(type).length);
    await receiver
      .waitFor(() => unseen().length === 0, 60_000, 'every kind of notification')
      .catch(async (error: Error) => {
        // Which of the missing kinds were recorded at all, and routed: where to look.
        const recorded = (await api('GET', `${p}/events?pageSize=1000`)).body.results ?? [];
        const found = unseen().map((type) => {
          const events = recorded.filter((event: any) => event.eventType === type);
          return `${type}: ${events.length} recorded, ${events.filter((event: any) => event.routedTime).length} routed`;
        });
        throw new Error(`${error.message}; not delivered: ${found.join('; ')}`);
      });
    const messageProblems = [
      ...records().flatMap((message) => publicApi.checkWebhookMessage(message.body)),
      ...notifications()
        .filter((message) => publicApi.notificationPayloads().has(message.body.notificationType))
        .flatMap((message) => publicApi.checkNotification(message.body)),
    ];
    expect(messageProblems).toEqual([]);
    expect(new Set(records().map((message) => message.body.action))).toEqual(new Set(['read', 'subscribe']));
  }, 120_000);

  it('answered every public operation, and nothing a strict client would refuse', () => {
    const missing = publicApi
      .operations()
      .map((operation) => operation.operationId)
      .filter((operationId) => !succeeded.has(operationId) && !hostedOnly.includes(operationId));
    expect({ missing, problems: [...problems] }).toEqual({ missing: [], problems: [] });
  });
});
