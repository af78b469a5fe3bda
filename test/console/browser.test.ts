/**
 * The builder console in a real browser (headless Chromium, driven by playwright-core, which never
 * downloads one): sign in, deploy a manifest, create a destination, follow a backfill with its
 * progress and logs, pause and resume, re-enable a disabled destination, rotate its secret, spot a
 * connection with bad credentials, read events and the activity chart; at 1280 px and at phone
 * width, by keyboard. A screenshot of each view goes to test-output/console/ (gitignored).
 * Skipped when /usr/bin/chromium is absent (`apt-get install -y chromium`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { config as ferryConfig, projectRoot, resetConfig } from '../../src/config.js';
import { transaction } from '../../src/db/orm.js';
import { findOrCreateBuilder, issueBuilderToken } from '../../src/domain/builder-tokens.js';
import { addMember } from '../../src/domain/orgs.js';
import { createProject } from '../../src/domain/projects.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { eventually } from '../installations/support.js';

// What page.evaluate callbacks use runs in the browser; the test program has no DOM types.
declare const document: any;
declare const window: any;

const chromiumPath = '/usr/bin/chromium';
const describeWithBrowser = existsSync(chromiumPath) ? describe : describe.skip;
const shots = join(projectRoot, 'test-output', 'console');

const CONTACTS = 500;

describeWithBrowser('the builder console in a real browser', () => {
  let sandbox: Sandbox;
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let consoleUrl: string;
  const groupRef = `acme-${randomUUID().slice(0, 8)}`;
  const integrationName = `crm-${randomUUID().slice(0, 8)}`;
  /** What the page complained about: CSP violations, uncaught errors. */
  const complaints: string[] = [];

  const view = (name: string) =>
    page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name }).click();
  const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    execFileSync(process.execPath, [join(projectRoot, 'scripts', 'build-console.js'), '--if-missing'], {
      stdio: 'inherit',
    });
    mkdirSync(shots, { recursive: true });
    sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
    process.env.FERRY_SANDBOX_URL = sandbox.url;
    stack = await startTestStack({ worker: true });
    const apiOrigin = new URL(stack.urls.api).origin;
    // As in production: the only browser origin allowed is the api host's own (the console's).
    process.env.FERRY_PUBLIC_API_URL = apiOrigin;
    process.env.FERRY_CORS_ORIGINS = 'https://app.example.com';
    resetConfig();
    consoleUrl = `${apiOrigin}/console/`;
    receiver = await WebhookReceiver.start();
    // Slow enough that the backfill is seen running: each page waits a moment before it is accepted.
    receiver.respond(async () => {
      await new Promise((resolve) => setTimeout(resolve, 700));
      return { status: 200 };
    });

    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text()))
        complaints.push(message.text());
    });
    page.on('pageerror', (error) => complaints.push(error.message));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.stop();
    await stack?.close();
    await sandbox?.close();
    delete process.env.FERRY_CORS_ORIGINS;
    delete process.env.FERRY_PUBLIC_API_URL;
  });

  it('is served by the api host with a strict policy, and names the other hosts', async () => {
    const response = await fetch(consoleUrl);
    expect(response.status).toBe(200);
    const policy = response.headers.get('content-security-policy')!;
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain(new URL(stack.urls.read).origin);
    const html = await response.text();
    expect(html).not.toMatch(/https?:\/\//); // nothing from a CDN
    const config: any = await (await fetch(`${consoleUrl}config.json`)).json();
    expect(config.hosts.read).toBe(stack.urls.read);
    expect(html).toContain('<link rel="icon" type="image/svg+xml" href="/console/favicon.svg"');
    const icon = await fetch(`${consoleUrl}favicon.svg`);
    expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
    expect(await icon.text()).toMatch(/^<svg /);
    const missing = await fetch(`${consoleUrl}assets/nothing.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
  });

  it('refuses a wrong key next to the field, then signs in by keyboard alone', async () => {
    await page.goto(consoleUrl);
    await page.getByLabel('API key', { exact: true }).fill('not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The note shows a hint before the answer comes: wait for the field to be marked invalid.
    await page.locator('#credential[aria-invalid="true"]').waitFor();
    const note = page.locator('#credential-note');
    expect(await note.textContent()).toMatch(/key/i);
    await shot('sign-in-refused');

    await page.getByLabel('API key', { exact: true }).fill('');
    // Keyboard only: Tab from the top of the page to the field, type, Enter.
    await page.locator('body').focus();
    for (let presses = 0; presses < 10; presses++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(() => document.activeElement?.id === 'credential')) break;
    }
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('credential');
    await page.keyboard.type(stack.project.apiKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Installations' }).waitFor();
    expect(await page.locator('#project-switch').inputValue()).toBe(stack.project.name);
  });

  it('creates a destination, showing the API’s problem next to a bad field', async () => {
    await view('Deliveries');
    await page.getByLabel('Name').fill('crm sync has spaces');
    await page.getByLabel('Webhook URL').fill(receiver.url());
    await page.getByRole('button', { name: 'Create' }).click();
    await page.locator('#destination-name[aria-invalid="true"]').waitFor();
    expect(await page.locator('#destination-name-note').textContent()).toMatch(/name/);
    await shot('destination-refused');
    await page.getByLabel('Name').fill('crm-sync');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('article', { name: 'Destination crm-sync' }).waitFor();
  });

  it('deploys a manifest, pointing at the line of each error', async () => {
    await view('Integrations');
    const bad = [
      'specVersion: 1.0.0',
      'integrations:',
      `  - name: ${integrationName}`,
      '    provider: sandboxApiKey',
      '    read:',
      '      objects:',
      '        - objectName: contacts',
      '          destination: crm-sync',
      '          schedule: every minute please',
    ].join('\n');
    await page.getByLabel('Manifest (amp.yaml)').fill(bad);
    await page.getByRole('button', { name: 'Deploy' }).click();
    const lineButton = page.getByRole('button', { name: /^Line \d+$/ }).first();
    await lineButton.waitFor();
    // The schedule is on line 9, and the problem is said once, there.
    expect(await page.getByRole('button', { name: /^Line \d+$/ }).allTextContents()).toEqual(['Line 9']);
    expect(await page.locator('.gutter li.bad-line').allTextContents()).toEqual(['9']);
    await lineButton.click();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('manifest');
    await shot('manifest-errors');

    // Check: a name the sandbox connector does not know is a warning on its line; nothing deploys.
    await page
      .getByLabel('Manifest (amp.yaml)')
      .fill(
        bad
          .replace('every minute please', '0 0 1 1 *')
          .replace('objectName: contacts', 'objectName: contatcs'),
      );
    await page.getByRole('button', { name: 'Check' }).click();
    const warnings = page.getByRole('list', { name: /^Warnings/ });
    await warnings.waitFor();
    expect(await warnings.textContent()).toContain('did you mean contacts?');
    expect(await page.locator('.gutter li.warn-line').allTextContents()).toEqual(['7']);
    await shot('manifest-warnings');

    const good =
      '# Our CRM sync: kept as written.\n' +
      bad.replace('every minute please', '0 0 1 1 *') +
      '\n          delivery:\n            pageSize: 100 # a smaller page for the demo\n';
    await page.getByLabel('Manifest (amp.yaml)').fill(good);
    await page.getByRole('button', { name: 'Deploy' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Deployed ${integrationName}` })
      .waitFor();
    await page.getByRole('link', { name: integrationName }).click();
    await expect(page.locator('pre.yaml').textContent()).resolves.toContain('objectName: contacts');
    await shot('integrations');

    // A second revision, compared with the first: only the line that changed is marked.
    const second = await stack.api('PUT', `/projects/${stack.project.id}/integrations:batch`, {
      body: {
        sourceYaml: good.replace(
          `    provider: sandboxApiKey`,
          `    displayName: CRM sync\n    provider: sandboxApiKey`,
        ),
      },
    });
    expect(second.status).toBe(200);
    await page.reload();
    // The editor holds the file as last deployed, comments and all, not YAML regenerated from it.
    await expect(page.getByLabel('Manifest (amp.yaml)').inputValue()).resolves.toBe(
      good.replace(`    provider: sandboxApiKey`, `    displayName: CRM sync\n    provider: sandboxApiKey`),
    );
    await page.getByLabel('Compare with').selectOption({ index: 1 });
    await page.locator('pre.diff').waitFor();
    expect(await page.locator('pre.diff .added').allTextContents()).toEqual(['+ displayName: CRM sync\n']);
    expect(await page.locator('pre.diff .removed').count()).toBe(0);
    await shot('revisions-compared');
  });

  it('follows a backfill started from the installations view: progress, result and logs', async () => {
    const integration = await stack.api(
      'GET',
      `/projects/${stack.project.id}/integrations/${integrationName}`,
    );
    const connection = await stack.api('POST', `/projects/${stack.project.id}/connections:generate`, {
      body: {
        provider: 'sandboxApiKey',
        groupRef,
        groupName: 'Acme Corp',
        consumerRef: 'jane',
        apiKey: 'sandbox-demo-key',
      },
    });
    expect(connection.status).toBe(201);
    const installation = await stack.api(
      'POST',
      `/projects/${stack.project.id}/integrations/${integration.body.id}/installations`,
      {
        body: {
          groupRef,
          config: {
            content: {
              provider: 'sandboxApiKey',
              read: {
                objects: {
                  contacts: {
                    objectName: 'contacts',
                    schedule: '0 0 1 1 *',
                    destination: 'crm-sync',
                    selectedFields: {},
                    selectedFieldsAuto: 'all',
                  },
                },
              },
            },
          },
        },
      },
    );
    expect(installation.status).toBe(201);

    await view('Installations');
    const card = page.getByRole('article', { name: `${integrationName} for ${groupRef}` });
    await card.waitFor();
    await expect(card.textContent()).resolves.toContain('healthy');
    // The next read, from the workflow's describe query: the manifest's cron fires on 1 January.
    await card.locator('td time').waitFor();
    expect(new Date((await card.locator('td time').getAttribute('datetime'))!).getUTCDate()).toBe(1);
    await page.getByLabel('Find a customer').fill('acme corp');
    await card.waitFor();
    await shot('installations');
    await expect(card.getByRole('link', { name: 'Temporal UI' }).getAttribute('href')).resolves.toContain(
      `workflows/installation%2F${installation.body.id}`,
    );

    await card.getByRole('button', { name: 'Backfill contacts' }).click();
    await page.getByRole('heading', { name: /^Operation / }).waitFor();
    // Running: a progress bar, then the result.
    await page.locator('progress').waitFor({ timeout: 30_000 });
    await shot('operation-running');
    await page
      .getByText(/^success$/)
      .first()
      .waitFor({ timeout: 60_000 });
    expect(await page.locator('.facts').textContent()).toContain(`${CONTACTS} records`);
    await expect(page.locator('.facts a').getAttribute('href')).resolves.toContain('/workflows/read%2F');
    await page.locator('.logs li').first().waitFor();
    await shot('operation');

    await page.getByRole('link', { name: 'Operations', exact: true }).click();
    await page.getByRole('heading', { name: 'Operations' }).waitFor();
    await page.locator('tbody tr').first().waitFor();
    await expect(page.locator('tbody tr').count()).resolves.toBe(1);
    await expect(page.locator('tbody tr').textContent()).resolves.toMatch(
      /read \(triggered\) contacts.*success/,
    );
    await shot('operations');
  }, 150_000);

  it('pauses and resumes reads through the read host, showing the state; shows the config as set', async () => {
    await view('Installations');
    const card = page.getByRole('article', { name: `${integrationName} for ${groupRef}` });
    const pause = card.getByRole('button', { name: /^Pause reads/ });
    // The state comes from the workflow: wait for it before pressing.
    await card.getByText('reads active', { exact: true }).waitFor();
    expect(await pause.getAttribute('aria-pressed')).toBe('false');
    await pause.click();
    await card.getByRole('status').filter({ hasText: 'Paused' }).waitFor();
    await card.getByText(/^paused/).waitFor();
    await card.getByText('reads paused', { exact: true }).waitFor();
    await card.locator('button[aria-pressed="true"]', { hasText: 'Pause reads' }).waitFor();
    await card.getByRole('button', { name: /^Resume reads/ }).click();
    await card.getByRole('status').filter({ hasText: 'Resumed' }).waitFor();
    await card.getByText('reads active', { exact: true }).waitFor();

    await card.locator('summary', { hasText: /^Config version/ }).click();
    const config = card.getByRole('table', { name: `Config of ${integrationName} for ${groupRef}` });
    await config.waitFor();
    expect(await config.locator('tbody tr').first().textContent()).toBe(
      'readcontacts0 0 1 1 * → crm-sync; fields: all',
    );
    await shot('installation-config');
  });

  it('shows a disabled destination, re-enables it and rotates its signing secret', async () => {
    const disabled = await stack.api('PATCH', `/projects/${stack.project.id}/destinations/crm-sync`, {
      body: { updateMask: ['disabled'], destination: { disabled: true } },
    });
    expect(disabled.status).toBe(200);
    await view('Deliveries');
    const card = page.getByRole('article', { name: 'Destination crm-sync' });
    await card.getByText(/^disabled/).waitFor();
    await shot('deliveries-disabled');
    await card.getByRole('button', { name: 'Re-enable crm-sync' }).click();
    await card.getByText('delivering').waitFor();
    // What was sent: the backfill's pages, each accepted with a 200, with its latency.
    const attempts = card.getByRole('table', { name: 'Delivery attempts to crm-sync' });
    await attempts.waitFor();
    expect(await attempts.locator('tbody tr').count()).toBeGreaterThanOrEqual(1);
    expect(await attempts.locator('tbody tr').first().textContent()).toMatch(/200.*\d+ ms/);
    // A read's page is the customer's records, not kept once delivered: the console says how to resend.
    await attempts
      .locator('tbody tr')
      .first()
      .getByRole('button', { name: /^Show message/ })
      .click();
    const shownMessage = card.getByRole('region', { name: /^Message of attempt/ });
    await shownMessage.waitFor();
    expect(await shownMessage.textContent()).toMatch(/does not keep the records.*replay operation/);
    const before = await stack.api(
      'GET',
      `/projects/${stack.project.id}/destinations/crm-sync?includeSecrets=true`,
    );
    await card.getByRole('button', { name: 'Rotate the signing secret of crm-sync' }).click();
    const shown = await card.getByRole('status').locator('code').textContent();
    expect(shown).toMatch(/^whsec_/);
    expect(shown).not.toBe(before.body.secrets.signingSecret);
    const after = await stack.api(
      'GET',
      `/projects/${stack.project.id}/destinations/crm-sync?includeSecrets=true`,
    );
    expect(after.body.secrets.signingSecret).toBe(shown);
    await shot('deliveries');
  });

  it('shows a destination failing every attempt as failing, and its installation degraded with the reason', async () => {
    const down = await WebhookReceiver.start();
    // Not a prefix of the first group: the later steps find that one's card and row by name.
    const otherGroup = `down-${randomUUID().slice(0, 8)}`;
    try {
      down.respond(() => ({ status: 503 }));
      const created = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
        body: { name: 'crm-down', type: 'webhook', metadata: { url: down.url() } },
      });
      expect(created.status).toBe(201);
      await stack.api('POST', `/projects/${stack.project.id}/connections:generate`, {
        body: {
          provider: 'sandboxApiKey',
          groupRef: otherGroup,
          consumerRef: 'joe',
          apiKey: 'sandbox-demo-key',
        },
      });
      const installed = await stack.api(
        'POST',
        `/projects/${stack.project.id}/integrations/${integrationName}/installations`,
        {
          body: {
            groupRef: otherGroup,
            config: {
              content: {
                provider: 'sandboxApiKey',
                read: {
                  objects: {
                    contacts: {
                      objectName: 'contacts',
                      schedule: '0 0 1 1 *',
                      destination: 'crm-down',
                      selectedFields: {},
                      selectedFieldsAuto: 'all',
                    },
                  },
                },
              },
            },
          },
        },
      );
      expect(installed.status).toBe(201);
      const read = await stack.read(
        'POST',
        `/projects/${stack.project.id}/integrations/${integrationName}/objects/contacts`,
        { body: { groupRef: otherGroup, mode: 'async' } },
      );
      expect(read.status).toBeLessThan(300);
      await down.waitFor(() => down.requests.length > 0, 30_000, 'a failed attempt');
      // The attempt is recorded once answered: wait for the API to say so before the views load.
      const installationPath = `/projects/${stack.project.id}/integrations/${integrationName}/installations/${installed.body.id}`;
      await eventually(
        async () => (await stack.api('GET', installationPath)).body.healthStatus === 'unhealthy',
      );

      // The previous step ended on Deliveries: Installations first, so each view loads afresh.
      await view('Installations');
      const degraded = page.getByRole('article', { name: `${integrationName} for ${otherGroup}` });
      await degraded.getByText('degraded').waitFor();
      const reason = degraded.getByLabel(`Why ${integrationName} for ${otherGroup} is degraded`);
      await reason.waitFor();
      expect(await reason.textContent()).toMatch(/Deliveries to destination "crm-down" have failed since/);
      await shot('installations-degraded');
      await view('Deliveries');
      const card = page.getByRole('article', { name: 'Destination crm-down' });
      await card.getByText('failing', { exact: true }).waitFor();
      expect(await card.textContent()).not.toContain('delivering');
      expect(await card.textContent()).toContain('last attempt: 503');
      await shot('deliveries-failing');
      // A test message shows what the receiver says now, and changes nothing.
      await card.getByRole('button', { name: 'Send a test message to crm-down' }).click();
      const answer = card.getByRole('status', { name: 'Test message to crm-down' });
      await answer.waitFor();
      expect(await answer.textContent()).toMatch(/test failed.*HTTP 503/);
      expect(await card.textContent()).toContain('failing');

      // Uninstalled from the console, after a confirmation.
      await view('Installations');
      const doomed = page.getByRole('article', { name: `${integrationName} for ${otherGroup}` });
      await doomed.getByRole('button', { name: `Uninstall ${integrationName} for ${otherGroup}` }).click();
      await doomed
        .getByRole('button', { name: `Confirm: uninstall ${integrationName} for ${otherGroup}` })
        .click();
      await doomed.waitFor({ state: 'detached' });
      const left = await stack.api(
        'GET',
        `/projects/${stack.project.id}/installations?groupRef=${otherGroup}`,
      );
      expect(left.body).toEqual([]);
    } finally {
      // Uninstalled (its connection goes with it), so what follows sees the first group only.
      const [installation] = (
        await stack.api('GET', `/projects/${stack.project.id}/installations?groupRef=${otherGroup}`)
      ).body;
      if (installation) {
        await stack.api(
          'DELETE',
          `/projects/${stack.project.id}/integrations/${integrationName}/installations/${installation.id}`,
        );
      }
      await down.stop();
    }
  }, 90_000);

  it('creates a destination of another type from its example, edits its settings and deletes it', async () => {
    await view('Deliveries');
    await page.locator('#destination-type').selectOption('rabbitmq');
    // Prefilled from the API's own example for the type (the OpenAPI document's create examples).
    const example = await page.locator('#destination-metadata').inputValue();
    expect(JSON.parse(example)).toMatchObject({ serverUrl: expect.stringMatching(/^amqp:/) });
    await page.locator('#destination-metadata').fill('{"serverUrl": "not a url", "exchange": "ferry"}');
    await page.locator('#destination-name').fill('orders-queue');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.locator('#destination-metadata[aria-invalid="true"]').waitFor();
    expect(await page.locator('#destination-metadata-note').textContent()).toMatch(/serverUrl/);
    await page.locator('#destination-metadata').fill(example);
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const card = page.getByRole('article', { name: 'Destination orders-queue' });
    await card.waitFor();

    // Settings: the metadata as set, changed field by field (the mask names only what changed).
    await card.getByText('Settings', { exact: true }).click();
    const settings = card.getByRole('form', { name: 'Settings of orders-queue' });
    const metadata = settings.getByLabel('Metadata');
    const shown = JSON.parse(await metadata.inputValue());
    expect(shown).toMatchObject({ exchange: 'ferry', routingKeyTemplate: '{action}.{objectName}' });
    await metadata.fill(JSON.stringify({ ...shown, routingKeyTemplate: 'crm.{objectName}' }));
    await settings.getByRole('button', { name: 'Save orders-queue' }).click();
    await settings.getByRole('status').waitFor();
    const stored = await stack.api('GET', `/projects/${stack.project.id}/destinations/orders-queue`);
    expect(stored.body.metadata).toMatchObject({ exchange: 'ferry', routingKeyTemplate: 'crm.{objectName}' });
    await shot('destination-settings');

    // Delete asks once more before it acts.
    await card.getByRole('button', { name: 'Delete orders-queue' }).click();
    await card.getByRole('button', { name: 'Delete orders-queue and its delivery history?' }).click();
    await card.waitFor({ state: 'detached' });
    const gone = await stack.api('GET', `/projects/${stack.project.id}/destinations/orders-queue`);
    expect(gone.status).toBe(404);
  });

  it('refuses to delete a destination an integration names, saying why', async () => {
    await view('Deliveries');
    const card = page.getByRole('article', { name: 'Destination crm-sync' });
    await card.getByRole('button', { name: 'Delete crm-sync' }).click();
    await card.getByRole('button', { name: 'Delete crm-sync and its delivery history?' }).click();
    await card.getByRole('alert').waitFor();
    expect(await card.getByRole('alert').textContent()).toMatch(/integration|installation/i);
    expect((await stack.api('GET', `/projects/${stack.project.id}/destinations/crm-sync`)).status).toBe(200);
  });

  it('routes an event type to a topic and the topic to a destination, then takes the routes down', async () => {
    await view('Events');
    await page.getByRole('heading', { name: 'Routing' }).waitFor();
    await page.getByLabel('New topic').fill(' ops-alerts');
    await page.getByRole('button', { name: 'Create topic' }).click();
    await page.locator('#topic-name[aria-invalid="true"]').waitFor();
    await page.getByLabel('New topic').fill('ops-alerts');
    await page.getByRole('button', { name: 'Create topic' }).click();
    const topics = page.getByRole('table', { name: 'Topics and their routes' });
    await topics.getByRole('cell', { name: 'ops-alerts', exact: true }).waitFor();

    const eventRoute = page.getByRole('form', { name: 'Route an event type' });
    await eventRoute.getByLabel('Event type').selectOption('destination.disabled');
    await eventRoute.getByLabel('To topic').selectOption({ label: 'ops-alerts' });
    await eventRoute.getByRole('button', { name: 'Route an event type' }).click();
    await topics.getByText('destination.disabled').waitFor();

    const topicRoute = page.getByRole('form', { name: 'Send a topic to a destination' });
    await topicRoute.getByLabel('Topic', { exact: true }).selectOption({ label: 'ops-alerts' });
    await topicRoute.getByLabel('To destination').selectOption({ label: 'crm-sync' });
    await topicRoute.getByRole('button', { name: 'Send a topic to a destination' }).click();
    await topics.getByRole('button', { name: 'Stop sending ops-alerts to crm-sync' }).waitFor();
    const routes = await stack.api('GET', `/projects/${stack.project.id}/notification-event-topic-routes`);
    expect(routes.body).toEqual(
      expect.arrayContaining([expect.objectContaining({ eventType: 'destination.disabled' })]),
    );
    await shot('events-routing');

    await topics.getByRole('button', { name: 'Stop routing destination.disabled to ops-alerts' }).click();
    await topics.getByRole('button', { name: 'Stop routing destination.disabled to ops-alerts?' }).click();
    await topics.getByText('destination.disabled').waitFor({ state: 'detached' });
    await topics.getByRole('button', { name: 'Delete topic ops-alerts' }).click();
    await topics.getByRole('button', { name: 'Delete topic ops-alerts and its routes?' }).click();
    await topics.getByRole('cell', { name: 'ops-alerts', exact: true }).waitFor({ state: 'detached' });
    const left = await stack.api('GET', `/projects/${stack.project.id}/topic-destination-routes`);
    expect(left.body).toEqual([]);
  });

  it('sends an event again to the destinations that have not accepted it', async () => {
    await view('Events');
    const first = page.getByRole('table', { name: 'Events, newest first' }).locator('tbody tr').first();
    await first.getByRole('button', { name: /^Send the .* event .* again$/ }).click();
    await first.getByRole('status').waitFor();
    expect(await first.getByRole('status').textContent()).toMatch(/sent again|no routed destination/);
  });

  it('makes a connection with bad credentials stand out', async () => {
    await transaction(async (em) => {
      await em
        .getConnection()
        .execute(`update connections set status = 'bad_credentials' where project_id = ?`, [
          stack.project.id,
        ]);
    });
    await view('Connections');
    await page.locator('tr.bad-row').getByText('bad credentials').waitFor();
    await shot('connections');
  });

  it('refuses to delete a connection an installation uses, saying which', async () => {
    await view('Connections');
    const row = page.locator('tbody tr').first();
    await row.getByRole('button', { name: /^Delete the .* connection of / }).click();
    await row.getByRole('button', { name: /for good\?$/ }).click();
    await row.getByRole('alert').waitFor();
    expect(await row.getByRole('alert').textContent()).toMatch(/used by 1 installation/);
  });

  it('lists events with their routing, and charts the records delivered', async () => {
    await view('Events');
    await page.getByRole('heading', { name: 'Events' }).waitFor();
    await page.getByRole('table', { name: 'Events, newest first' }).locator('tbody tr').first().waitFor();
    const events = page.getByRole('table', { name: 'Events, newest first' });
    await expect(events.locator('tbody').textContent()).resolves.toContain('installation.created');
    await shot('events');

    await view('Activity');
    const chart = page.getByRole('img', { name: new RegExp(`^${integrationName}: `) });
    await chart.waitFor();
    // The backfill the console started read every contact.
    expect(await chart.getAttribute('aria-label')).toContain(`${CONTACTS} records delivered`);
    await shot('activity');
  });

  it('labels every control', async () => {
    for (const view of [
      'installations',
      'integrations',
      'destinations',
      'connections',
      'events',
      'activity',
    ]) {
      await page.goto(`${consoleUrl}#/${stack.project.name}/${view}`);
      await page.locator('main h1').waitFor();
      await page
        .locator('[aria-busy="true"]')
        .first()
        .waitFor({ state: 'detached' })
        .catch(() => undefined);
      const unlabelled = await page.evaluate(() =>
        [...document.querySelectorAll('input, select, textarea, button, a[href]')]
          .filter((element: any) => {
            const labelled =
              element.getAttribute('aria-label') ||
              (element.id && document.querySelector(`label[for="${element.id}"]`)) ||
              element.closest('label') ||
              (element.textContent ?? '').trim();
            return !labelled;
          })
          .map((element: any) => element.outerHTML.slice(0, 120)),
      );
      expect({ view, unlabelled }).toEqual({ view, unlabelled: [] });
    }
  });

  it('fits a phone screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const view of [
      'installations',
      'integrations',
      'destinations',
      'connections',
      'events',
      'activity',
    ]) {
      await page.goto(`${consoleUrl}#/${stack.project.name}/${view}`);
      await page.locator('main h1').waitFor();
      await page.waitForLoadState('networkidle');
      const overflowing = await page.evaluate(() =>
        [...document.querySelectorAll('body *')]
          .filter((element: any) => element.getBoundingClientRect().right > window.innerWidth + 0.5)
          .filter((element: any) => !element.closest('.overflow-auto'))
          .map((element: any) => element.outerHTML.slice(0, 100)),
      );
      expect({ view, overflowing }).toEqual({ view, overflowing: [] });
      await shot(`phone-${view}`);
    }
  });

  it('signs a builder in with a token and switches between the projects of their orgs', async () => {
    const other = `p-${randomUUID().slice(0, 8)}`;
    const token = await transaction(async (em) => {
      const builder = await findOrCreateBuilder(em, `ops-${randomUUID().slice(0, 8)}@example.com`);
      addMember(em, stack.project.orgId, builder.id, 'owner');
      await createProject(em, { name: other, orgId: stack.project.orgId });
      return builder;
    }).then((builder) => issueBuilderToken(builder, ferryConfig().builderTokenSecret));
    const fresh = await context.browser()!.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const builderPage = await fresh.newPage();
      builderPage.setDefaultTimeout(15_000);
      await builderPage.goto(consoleUrl);
      await builderPage.getByLabel('a builder token').check();
      await builderPage.getByLabel('Builder token', { exact: true }).fill(token);
      await builderPage.getByRole('button', { name: 'Sign in' }).click();
      const switcher = builderPage.getByRole('combobox', { name: /^Project/ });
      await switcher.waitFor();
      const names = await switcher.locator('option').allTextContents();
      expect(names).toEqual(expect.arrayContaining([stack.project.name, other]));
      await switcher.selectOption(other);
      await builderPage.waitForURL(new RegExp(`#/${other}/`));
      await builderPage.getByText('No installations yet.').waitFor();
      await builderPage.screenshot({ path: join(shots, 'project-switch.png'), fullPage: true });
      await switcher.selectOption(stack.project.name);
      await builderPage.getByRole('article', { name: `${integrationName} for ${groupRef}` }).waitFor();
    } finally {
      await fresh.close();
    }
  });

  it('ran without a policy violation or an uncaught error', () => {
    expect(complaints).toEqual([]);
  });
});
