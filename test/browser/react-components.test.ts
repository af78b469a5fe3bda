/**
 * The public React components, `@amp-labs/react` as published on npm, unchanged, against Ferry: a
 * page built with Vite (test/fixtures/react-app), driven in headless Chromium as a customer would,
 * checked through Ferry's API and a webhook receiver. The browser reaches loopback only; anything
 * else is aborted and listed. Skipped when /usr/bin/chromium is absent (`apt-get install -y chromium`).
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';
import type { Page } from 'playwright-core';
import { resetConfig } from '../../src/config.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { demoApiKey, devClient, startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { eventually } from '../installations/support.js';
import {
  buildReactApp,
  hasChromium,
  launchOfflineBrowser,
  serveReactApp,
  type OfflineBrowser,
  type ServedApp,
} from './react-app.js';

const describeWithBrowser = hasChromium ? describe : describe.skip;

/** The one thing the page may not load: the "Secured by" logo the package links from a CDN. */
const packageLogo = /^https:\/\/res\.cloudinary\.com\//;

let sandbox: Sandbox;
let stack: TestStack;
let receiver: WebhookReceiver;
let built: { dir: string; remove(): void };
let app: ServedApp;
let browser: OfflineBrowser;
let mintToken: (claims: { groupRef: string; consumerRef: string }) => Promise<string>;
/** What the README tells builders to put in browser code: a key with only the frontend scope. */
let frontendKey: string;
const suffix = randomUUID().slice(0, 8);
const apiKeyIntegration = `crm-${suffix}`;
const oauthIntegration = `crm-oauth-${suffix}`;

function readObject(objectName: string) {
  return {
    objectName,
    destination: 'crm-sync',
    schedule: '0 0 1 1 *',
    requiredFields: [{ fieldName: 'email' }],
    optionalFields: [{ fieldName: 'firstName' }, { fieldName: 'lastName' }],
    backfill: { defaultPeriod: { fullHistory: true } },
  };
}

async function createIntegration(name: string, provider: string): Promise<void> {
  const created = await stack.api('POST', `/projects/${stack.project.id}/integrations`, {
    body: {
      name,
      provider,
      latestRevision: {
        specVersion: '1.0.0',
        content: {
          name,
          provider,
          read: { objects: [readObject('contacts')] },
          write: { objects: [{ objectName: 'contacts' }] },
        },
      },
    },
  });
  expect(created.status).toBe(201);
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 25, companies: 3, deals: 3, autoApprove: false });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  // The OAuth callback is served by the api host, whose origin the components trust for messages.
  const apiOrigin = stack.urls.api.replace(/\/v1$/, '');
  process.env.FERRY_PUBLIC_API_URL = apiOrigin;
  resetConfig();

  const signingSecret = generateSigningSecret();
  receiver = await WebhookReceiver.start([signingSecret]);
  const destination = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: {
      name: 'crm-sync',
      type: 'webhook',
      metadata: { url: receiver.url() },
      secrets: { signingSecret },
    },
  });
  expect(destination.status).toBe(201);
  await createIntegration(apiKeyIntegration, 'sandboxApiKey');
  await createIntegration(oauthIntegration, 'sandbox');
  const app_ = await stack.api('POST', `/projects/${stack.project.id}/provider-apps`, {
    body: { provider: 'sandbox', clientId: devClient.clientId, clientSecret: devClient.clientSecret },
  });
  expect(app_.status).toBe(200);
  const frontend = await stack.api('POST', `/projects/${stack.project.id}/api-keys`, {
    body: { label: 'components', scopes: ['frontend'] },
  });
  expect(frontend.status).toBe(201);
  frontendKey = frontend.body.key;

  // The builder's backend: a project JWT key, and tokens minted for one group each.
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = await stack.api('POST', `/projects/${stack.project.id}/jwt-keys`, {
    body: {
      label: 'react components',
      algorithm: 'RSA',
      publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    },
  });
  expect(key.status).toBe(201);
  mintToken = ({ groupRef, consumerRef }) =>
    new SignJWT({ groupRef })
      .setProtectedHeader({ alg: 'RS256', kid: key.body.id })
      .setSubject(consumerRef)
      .setExpirationTime('10m')
      .sign(privateKey);

  built = await buildReactApp(apiOrigin);
  app = await serveReactApp(built.dir, mintToken);
  browser = await launchOfflineBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  built?.remove();
  await receiver?.stop();
  await stack?.close();
  await sandbox?.close();
});

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
}

/** Opens the builder's page; records every request the components send to Ferry's api host. */
async function openPage(params: Record<string, string>): Promise<{ page: Page; seen: Seen[] }> {
  const page = await browser.context.newPage();
  const seen: Seen[] = [];
  page.on('request', (request) => {
    if (request.url().startsWith(stack.urls.api) && request.method() !== 'OPTIONS') {
      seen.push({ method: request.method(), url: request.url(), headers: request.headers() });
    }
  });
  await page.goto(`${app.url}/?${new URLSearchParams({ project: stack.project.name, ...params })}`);
  return { page, seen };
}

/** The component callbacks the page recorded, one JSON per line in `#events`. */
async function events(page: Page): Promise<any[]> {
  const text = (await page.textContent('#events')) ?? '';
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

async function waitForEvent(page: Page, name: string): Promise<any> {
  await page.waitForFunction(
    // runs in the page
    (event) =>
      ((globalThis as any).document.getElementById('events')?.textContent ?? '').includes(
        `"event":"${event}"`,
      ),
    name,
  );
  return (await events(page)).find((event) => event.event === name);
}

async function installationsOf(integration: string, groupRef: string): Promise<any[]> {
  const response = await stack.api(
    'GET',
    `/projects/${stack.project.id}/integrations/${integration}/installations?groupRef=${groupRef}`,
  );
  expect(response.status).toBe(200);
  return response.body;
}

/** The API-key form of the components' connect step: paste the key, Next. */
async function connectWithApiKey(page: Page): Promise<void> {
  await page.getByPlaceholder('Paste your API key here').fill(demoApiKey);
  await page.getByRole('button', { name: 'Next' }).click();
}

/** Read messages for one group that the receiver accepted, in arrival order. */
function messagesFor(groupRef: string): any[] {
  return receiver.accepted().filter((request) => request.body?.groupRef === groupRef);
}

describeWithBrowser('the public React components (@amp-labs/react) against Ferry', () => {
  it('InstallIntegration with an API key: connect, choose fields, install, allow writes; Ferry has it and records arrive', async () => {
    const groupRef = `acme-${suffix}`;
    const { page, seen } = await openPage({
      view: 'install',
      auth: 'apiKey',
      apiKey: frontendKey,
      integration: apiKeyIntegration,
      groupRef,
      consumerRef: 'ada',
    });
    await connectWithApiKey(page);
    await page.getByText('First name', { exact: true }).click();
    await page.getByRole('button', { name: 'Install' }).click();
    const installed = await waitForEvent(page, 'installed');

    const [installation] = await installationsOf(apiKeyIntegration, groupRef);
    expect(installation.id).toBe(installed.installationId);
    expect(installation).toMatchObject({
      healthStatus: 'healthy',
      connection: { provider: 'sandboxApiKey', authScheme: 'apiKey', group: { groupRef, groupName: 'Acme' } },
      createdBy: 'consumer:ada',
      config: {
        content: {
          provider: 'sandboxApiKey',
          read: {
            objects: {
              // schedule and destination were not sent: they come from the manifest
              contacts: {
                objectName: 'contacts',
                schedule: '0 0 1 1 *',
                destination: 'crm-sync',
                selectedFields: { firstName: true },
              },
            },
          },
        },
      },
    });
    expect(installed.config.id).toBe(installation.config.id);

    // The component moves on to the write step: allow writing contacts, Save.
    await page.getByText('to write to these objects').waitFor();
    await page.getByRole('checkbox').last().click();
    await page.getByRole('button', { name: 'Save' }).click();
    const withWrite = await waitForEvent(page, 'updated');
    const [afterWrite] = await installationsOf(apiKeyIntegration, groupRef);
    expect(afterWrite.config.id).toBe(withWrite.config.id);
    expect(afterWrite.config.content.write).toEqual({ objects: { contacts: { objectName: 'contacts' } } });
    expect(afterWrite.config.content.read).toEqual(installation.config.content.read);

    // The manifest's full-history backfill delivers every contact, with the chosen fields only.
    await receiver.waitFor(
      () =>
        new Set(messagesFor(groupRef).flatMap((message) => message.body.result.map((r: any) => r.raw.id)))
          .size === 25,
      60_000,
      'the backfill of the installation made in the browser',
    );
    const [first] = messagesFor(groupRef);
    expect(first.verified).toBe(true);
    expect(first.body).toMatchObject({ installationId: installation.id, readType: 'backfill' });
    const fields = Object.keys(first.body.result[0].fields);
    expect(fields).toEqual(expect.arrayContaining(['email', 'firstname']));
    expect(fields).not.toContain('lastname');

    // Every call named the client, and carried the API key rather than a token.
    expect(seen.length).toBeGreaterThan(5);
    for (const request of seen) {
      expect(request.headers).toMatchObject({
        'x-amp-client': 'react',
        'x-amp-client-version': '2.16.1',
        'x-api-key': frontendKey,
      });
    }
    expect(browser.blocked.every((url) => packageLogo.test(url))).toBe(true);
    await page.close();
  }, 120_000);

  it('InstallIntegration updates the fields and uninstalls, and Ferry follows', async () => {
    const groupRef = `acme-${suffix}`;
    const { page } = await openPage({
      view: 'install',
      auth: 'apiKey',
      apiKey: frontendKey,
      integration: apiKeyIntegration,
      groupRef,
      consumerRef: 'ada',
    });
    // Already installed: the component opens on the configuration, with the saved choice.
    await page.getByText('Reading from Contacts is enabled.').waitFor();
    await page.getByText('Last name', { exact: true }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    const updated = await waitForEvent(page, 'updated');
    const [installation] = await installationsOf(apiKeyIntegration, groupRef);
    expect(installation.config.id).toBe(updated.config.id);
    expect(installation.config.content.read.objects.contacts).toMatchObject({
      schedule: '0 0 1 1 *',
      destination: 'crm-sync',
      selectedFields: { firstName: true, lastName: true },
    });

    // Manage: the customer pastes a new API key for the connection ("Update connection").
    const connectionId = installation.connection.id;
    const connectionPath = `/projects/${stack.project.id}/connections/${connectionId}`;
    await stack.api('PATCH', connectionPath, {
      body: { updateMask: ['apiKey'], connection: { apiKey: 'stale-key' } },
    });
    await page.getByText('Manage').click();
    await page.getByPlaceholder('Paste your API key here').fill(demoApiKey);
    await page.getByRole('button', { name: 'Next' }).click();
    const rotated = await eventually(async () => {
      const connection = await stack.api('GET', `${connectionPath}?includeCreds=true`);
      return connection.body.apiKey === demoApiKey && connection.body;
    });
    expect(rotated).toMatchObject({ id: connectionId, status: 'working' });

    await page.getByRole('button', { name: 'Yes, uninstall' }).click();
    const uninstalled = await waitForEvent(page, 'uninstalled');
    expect(uninstalled.installationId).toBe(installation.id);
    expect(await installationsOf(apiKeyIntegration, groupRef)).toEqual([]);
    // Its connection went with it: no other installation used it.
    const connections = await stack.api(
      'GET',
      `/projects/${stack.project.id}/connections?groupRef=${groupRef}&provider=sandboxApiKey`,
    );
    expect(connections.body).toEqual([]);
    await page.close();
  });

  it('with getToken instead of an API key, every call carries a project JWT for the group', async () => {
    const groupRef = `jwt-${suffix}`;
    const { page, seen } = await openPage({
      view: 'install',
      auth: 'jwt',
      integration: apiKeyIntegration,
      groupRef,
      consumerRef: 'grace',
    });
    await connectWithApiKey(page);
    await page.getByText('Last name', { exact: true }).click();
    await page.getByRole('button', { name: 'Install' }).click();
    await waitForEvent(page, 'installed');
    const [installation] = await installationsOf(apiKeyIntegration, groupRef);
    expect(installation).toMatchObject({
      connection: { group: { groupRef } },
      // who made the config: the token's subject, a consumer
      config: {
        createdBy: 'consumer:grace',
        content: { read: { objects: { contacts: { selectedFields: { lastName: true } } } } },
      },
    });
    expect(seen.length).toBeGreaterThan(5);
    for (const request of seen) {
      expect(request.headers['x-api-key']).toBeUndefined();
      expect(request.headers.authorization).toMatch(/^Bearer ey/);
    }
    await page.close();
  });

  it('ConnectProvider with an OAuth provider: popup, consent, the component hears Ferry; re-authorize, remove', async () => {
    const groupRef = `oauth-${suffix}`;
    const { page } = await openPage({
      view: 'connect',
      auth: 'apiKey',
      apiKey: frontendKey,
      provider: 'sandbox',
      groupRef,
      consumerRef: 'lin',
    });
    const popupOpened = browser.context.waitForEvent('page');
    await page.getByRole('button', { name: 'Next' }).click();
    const popup = await popupOpened;
    await popup.waitForURL(/\/oauth\/authorize\?/);
    const popupClosed = popup.waitForEvent('close');
    await popup.getByRole('button', { name: 'Approve' }).click();
    await popupClosed;

    const connected = await waitForEvent(page, 'connected');
    const connections = await stack.api(
      'GET',
      `/projects/${stack.project.id}/connections?groupRef=${groupRef}&provider=sandbox`,
    );
    expect(connections.body).toHaveLength(1);
    expect(connections.body[0]).toMatchObject({
      id: connected.connectionId,
      status: 'working',
      authScheme: 'oauth2/authorizationCode',
      group: { groupRef, groupName: 'Acme' },
      consumer: { consumerRef: 'lin' },
    });

    // Manage connection: re-authorize through :oauth-update, the same popup and message.
    await page.getByRole('button', { name: 'Update connection' }).click();
    const reauthOpened = browser.context.waitForEvent('page');
    await page.getByRole('button', { name: 'Next' }).click();
    const reauth = await reauthOpened;
    await reauth.waitForURL(/\/oauth\/authorize\?/);
    const reauthClosed = reauth.waitForEvent('close');
    await reauth.getByRole('button', { name: 'Approve' }).click();
    await reauthClosed;
    // shown only when the message carries the connection (data.connection)
    await page.getByText('Connection updated successfully').waitFor();

    // ... and remove it.
    await page.getByRole('button', { name: 'Remove connection' }).click();
    const disconnected = await waitForEvent(page, 'disconnected');
    expect(disconnected.connectionId).toBe(connected.connectionId);
    const after = await stack.api(
      'GET',
      `/projects/${stack.project.id}/connections?groupRef=${groupRef}&provider=sandbox`,
    );
    expect(after.body).toEqual([]);
    await page.close();
  });

  it('ConnectProvider over OAuth with getToken: /oauth-connect takes the group’s project JWT', async () => {
    const groupRef = `oauth-jwt-${suffix}`;
    const { page, seen } = await openPage({
      view: 'connect',
      auth: 'jwt',
      provider: 'sandbox',
      groupRef,
      consumerRef: 'mei',
    });
    const popupOpened = browser.context.waitForEvent('page');
    await page.getByRole('button', { name: 'Next' }).click();
    const popup = await popupOpened;
    await popup.waitForURL(/\/oauth\/authorize\?/);
    const popupClosed = popup.waitForEvent('close');
    await popup.getByRole('button', { name: 'Approve' }).click();
    await popupClosed;
    const connected = await waitForEvent(page, 'connected');
    const connection = await stack.api(
      'GET',
      `/projects/${stack.project.id}/connections/${connected.connectionId}`,
    );
    expect(connection.body).toMatchObject({
      group: { groupRef },
      consumer: { consumerRef: 'mei' },
      status: 'working',
    });
    const started = seen.find((request) => request.url.endsWith('/oauth-connect'));
    expect(started?.headers.authorization).toMatch(/^Bearer /);
    expect(started?.headers['x-api-key']).toBeUndefined();
    await page.close();
  });
});
