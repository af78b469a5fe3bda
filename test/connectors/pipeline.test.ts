import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { connectorDeclaration, getProvider } from '../../src/providers/catalog/index.js';
import { effectiveObject } from '../../src/providers/catalog/connector-declarations.js';
import { firstValueAt } from '../../src/providers/declarative/json-pointer.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { eventually } from '../installations/support.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { overrideFor, type ConformanceFake } from './kit/conformance.js';
import { loadSpecs } from './kit/specs.js';

/**
 * Every deep connector through the whole pipeline, against its local server reached through
 * FERRY_PROVIDER_OVERRIDES: a connection, an installation whose backfill reads every seeded record
 * and delivers it signed; a stale token refreshed at the provider's token endpoint; and credentials
 * the provider refuses for good ending as `bad_credentials` with one `connection.error`.
 */
const specs = await loadSpecs();

const SEEDED = 12;
let stack: TestStack;
let receiver: WebhookReceiver;
const fakes = new Map<string, ConformanceFake>();

beforeAll(async () => {
  for (const spec of specs) fakes.set(spec.provider, await spec.start());
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify(
    Object.fromEntries(
      specs.map((spec) => [spec.provider, overrideFor(spec.provider, fakes.get(spec.provider)!)]),
    ),
  );
  resetConfig();
  stack = await startTestStack({ worker: true });
  const signingSecret = generateSigningSecret();
  receiver = await WebhookReceiver.start([signingSecret]);
  const destination = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: {
      name: 'warehouse',
      type: 'webhook',
      metadata: { url: receiver.url() },
      secrets: { signingSecret },
    },
  });
  expect(destination.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.stop();
  for (const fake of fakes.values()) await fake.stop();
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
});

/** The connection's credentials, the way each auth type brings them to connections:generate. */
function credentialsBody(provider: string, credential: string): Record<string, unknown> {
  const catalog = getProvider(provider)!;
  const authType = catalog.authType;
  // An app's own grant (Help Scout): the connection gets its token from the provider's token endpoint.
  if (authType === 'oauth2' && catalog.oauth2Opts?.grantType === 'clientCredentials') {
    return {
      oauth2ClientCredentials: { clientId: `${provider}-client`, clientSecret: `${provider}-secret` },
    };
  }
  // The password grant (SugarCRM): the user's login, which Ferry trades for a token at once.
  if (authType === 'oauth2' && catalog.oauth2Opts?.grantType === 'password') {
    return {
      oauth2Password: {
        username: 'ada@example.com',
        password: 'correct horse',
        clientId: `${provider}-client`,
      },
    };
  }
  if (authType === 'oauth2') {
    return { oauth2AuthorizationCode: { accessToken: credential, refreshToken: 'refresh-token-1' } };
  }
  if (authType === 'basic') return { basicAuth: { username: credential, password: '' } };
  // A provider with inputs of its own (GitLab's access token) takes the credential as each of them.
  if (authType === 'custom') {
    const inputs = getProvider(provider)!.customOpts?.inputs ?? [];
    return { customAuth: Object.fromEntries(inputs.map((input) => [input.name, credential])) };
  }
  return { apiKey: credential };
}

describe.each(specs.map((spec) => [spec.provider, spec] as const))(
  '%s through the pipeline',
  (provider, spec) => {
    const groupRef = `${provider}-${randomUUID().slice(0, 8)}`;
    const object = spec.objects[0].name;
    let fake: ConformanceFake;
    let connectionId: string;
    let integrationId: string;
    let seeded: string[];

    beforeAll(() => {
      fake = fakes.get(provider)!;
    });

    const events = async (type: string): Promise<any[]> =>
      (
        await stack.api('GET', `/projects/${stack.project.id}/events?eventType=${type}&pageSize=1000`)
      ).body.results.filter((event: any) => event.data.connectionId === connectionId);

    it('backfills every record into the destination, signed', async () => {
      seeded = fake.seed(
        object,
        Array.from({ length: SEEDED }, (_, i) => Date.UTC(2025, 0, 1) + i * 3_600_000),
      );
      if (getProvider(provider)!.authType === 'oauth2') {
        // Refreshing an imported token needs the OAuth client it was issued to.
        const app = await stack.api('POST', `/projects/${stack.project.id}/provider-apps`, {
          body: { provider, clientId: `${provider}-client`, clientSecret: `${provider}-secret` },
        });
        expect(app.status).toBe(200);
      }
      const connection = await stack.api('POST', `/projects/${stack.project.id}/connections:generate`, {
        body: {
          provider,
          groupRef,
          consumerRef: `user-${groupRef}`,
          ...(spec.templateVars && {
            providerMetadata: Object.fromEntries(
              Object.entries(spec.templateVars).map(([name, value]) => [name, { value, source: 'input' }]),
            ),
          }),
          ...credentialsBody(provider, fake.credential),
        },
      });
      expect(connection.status).toBe(201);
      connectionId = connection.body.id;
      const name = `${provider}-sync`;
      const integration = await stack.api('POST', `/projects/${stack.project.id}/integrations`, {
        body: {
          name,
          provider,
          latestRevision: {
            specVersion: '1.0.0',
            content: {
              name,
              provider,
              read: {
                objects: [
                  {
                    objectName: object,
                    destination: 'warehouse',
                    schedule: '0 0 1 1 *',
                    optionalFieldsAuto: 'all',
                    backfill: { defaultPeriod: { fullHistory: true } },
                  },
                ],
              },
            },
          },
        },
      });
      expect(integration.status).toBe(201);
      integrationId = integration.body.id;
      const installation = await stack.api(
        'POST',
        `/projects/${stack.project.id}/integrations/${integrationId}/installations`,
        {
          body: {
            groupRef,
            config: {
              content: {
                provider,
                read: {
                  objects: {
                    [object]: {
                      objectName: object,
                      schedule: '0 0 1 1 *',
                      destination: 'warehouse',
                      selectedFields: {},
                    },
                  },
                },
              },
            },
          },
        },
      );
      expect(installation.status).toBe(201);
      await receiver.waitFor(
        () => seeded.every((id) => deliveredIds(provider, object).includes(id)),
        60_000,
        `${provider} ${object} records`,
      );
      const requests = receiver.accepted().filter((request) => request.body?.provider === provider);
      expect(requests.every((request) => request.verified)).toBe(true);
      expect(requests[0].body).toMatchObject({
        action: 'read',
        readType: 'backfill',
        rawObjectName: object,
        groupRef,
      });
      await eventually(async () => (await events('read.backfill.done')).length === 1);
    });

    it('refreshes a stale token at the provider, or marks refused credentials bad_credentials', async () => {
      const oauth = getProvider(provider)!.authType === 'oauth2';
      fake.rotateCredential();
      const trigger = async () =>
        stack.read('POST', `/projects/${stack.project.id}/integrations/${integrationId}/objects/${object}`, {
          body: { groupRef, mode: 'async', sinceTimestamp: '2024-01-01T00:00:00Z' },
        });
      const finished = async (operationId: string) =>
        eventually(async () => {
          const operation = await stack.api('GET', `/projects/${stack.project.id}/operations/${operationId}`);
          return operation.body.status !== 'in_progress' && operation.body;
        }, 60_000);
      if (oauth) {
        const refreshed = await finished((await trigger()).body.operationId);
        expect([refreshed.status, refreshed.result]).toEqual(['success', expect.any(String)]);
        expect(await events('connection.refreshed')).not.toHaveLength(0);
        fake.refuseRefresh?.();
        fake.rotateCredential();
      }
      const failed = await finished((await trigger()).body.operationId);
      expect(failed.status).toBe('failure');
      const connection = await stack.api('GET', `/projects/${stack.project.id}/connections/${connectionId}`);
      expect(connection.body.status).toBe('bad_credentials');
      await eventually(async () => (await events('connection.error')).length === 1);
    });
  },
);

/** Ids of the records delivered from the provider, read where its declaration says ids are. */
function deliveredIds(provider: string, object: string): string[] {
  const idPointer = effectiveObject(connectorDeclaration(provider)!, object)!.id ?? '/id';
  return receiver
    .accepted()
    .filter((request) => request.body?.provider === provider)
    .flatMap((request) =>
      (request.body.result ?? []).map((entry: any) => String(firstValueAt(entry.raw, idPointer))),
    );
}
