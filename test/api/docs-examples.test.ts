/**
 * The reference page's request examples work as pasted: against the README quick start's stack
 * (its example manifests deployed, its destination, group `acme` connected to the sandbox CRM),
 * the install, read, write and search examples each succeed, with only the project swapped for
 * the test's. No placeholder a reader would have to replace (`string`, `additionalProp1`).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

let sandbox: Sandbox;
let stack: TestStack;
let receiver: WebhookReceiver;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 20 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  resetConfig();
  stack = await startTestStack({ worker: true });
  receiver = await WebhookReceiver.start();
  const project = `/projects/${stack.project.name}`;
  const destination = await stack.api('POST', `${project}/destinations`, {
    body: { name: 'records', type: 'webhook', metadata: { url: receiver.url() } },
  });
  expect(destination.status).toBe(201);
  for (const file of ['read', 'write']) {
    const deployed = await stack.api('PUT', `${project}/integrations:batch`, {
      body: { sourceYaml: readFileSync(`examples/${file}.yaml`, 'utf8') },
    });
    expect(deployed.status).toBe(200);
  }
  const connected = await stack.api('POST', `${project}/connections:generate`, {
    body: { provider: 'sandboxApiKey', groupRef: 'acme', consumerRef: 'ada', apiKey: 'sandbox-demo-key' },
  });
  expect(connected.status).toBe(201);
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.stop();
  await sandbox?.close();
  delete process.env.FERRY_SANDBOX_URL;
});

/** The example body of an operation in a listener's document, and its path. */
async function example(listener: 'api' | 'read' | 'write' | 'search', operationId: string) {
  const document = await request('GET', `${new URL(stack.urls.api).origin}/v1/docs/openapi/${listener}.json`);
  expect(document.status).toBe(200);
  for (const [path, operations] of Object.entries(
    document.body.paths as Record<string, Record<string, any>>,
  )) {
    for (const operation of Object.values(operations)) {
      if (operation.operationId !== operationId) continue;
      const body = operation.requestBody?.content?.['application/json']?.example;
      expect({ operationId, body }).toEqual({ operationId, body: expect.any(Object) });
      expect(JSON.stringify(body)).not.toMatch(/"string"|additionalProp|"builder:|"consumer:/);
      return { path, body };
    }
  }
  throw new Error(`${operationId} is not in the ${listener} document`);
}

describe('the reference page’s request examples', () => {
  it('install, read, write and search, each as the page shows it', async () => {
    const project = `/projects/${stack.project.name}`;
    const install = await example('api', 'createInstallation');
    expect(install.path).toMatch(/\/integrations\/\{integrationId\}\/installations$/);
    const installed = await stack.api('POST', `${project}/integrations/crm-read/installations`, {
      body: install.body,
    });
    expect([installed.status, installed.body.title]).toEqual([201, undefined]);
    expect(installed.body.config.createdBy).toMatch(/^builder:/);

    const read = await example('read', 'triggerRead');
    const started = await stack.read('POST', `${project}/integrations/crm-read/objects/contacts`, {
      body: read.body,
    });
    expect([started.status, started.body.title]).toEqual([201, undefined]);

    const writeInstall = await stack.api('POST', `${project}/integrations/crm-write/installations`, {
      body: {
        groupRef: 'acme',
        config: {
          content: {
            provider: 'sandboxApiKey',
            write: { objects: { contacts: { objectName: 'contacts' } } },
          },
        },
      },
    });
    expect(writeInstall.status).toBe(201);
    const write = await example('write', 'writeRecords');
    const written = await stack.write('POST', `${project}/integrations/crm-write/objects/contacts`, {
      body: write.body,
    });
    expect([written.status, written.body.result?.success]).toEqual([200, true]);

    const search = await example('search', 'searchRecords');
    const found = await stack.search('POST', `${project}/integrations/crm-read?groupRef=acme`, {
      body: search.body,
    });
    expect([found.status, found.body.title]).toEqual([200, undefined]);
    // The contact the write example created.
    expect(found.body.result).toEqual([
      expect.objectContaining({ fields: expect.objectContaining({ email: 'ada@example.com' }) }),
    ]);
  }, 60_000);
});
