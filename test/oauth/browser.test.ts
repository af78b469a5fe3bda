/**
 * Tried as a new user would, in a real browser: a builder's web page asks Ferry for an
 * authorization URL, opens it in a popup, the user approves on the sandbox's consent page, and the
 * page hears the result from Ferry's callback. Skipped when /usr/bin/chromium is absent
 * (`apt-get install -y chromium`); playwright-core drives it and never downloads a browser.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createSandboxApp, startOAuthStack, type OAuthStack } from './helpers.js';

const chromiumPath = '/usr/bin/chromium';
const describeWithBrowser = existsSync(chromiumPath) ? describe : describe.skip;

/** The builder's page: a Connect button, a popup, and a listener for Ferry's message. */
function builderPage(apiUrl: string, apiKey: string, projectName: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Builder app</title></head>
<body>
<button id="connect">Connect your Sandbox CRM</button>
<pre id="result"></pre>
<script>
  window.addEventListener('message', (event) => {
    if (event.data && event.data.type === 'ferry:oauth') {
      document.getElementById('result').textContent = JSON.stringify(event.data);
    }
  });
  document.getElementById('connect').addEventListener('click', async () => {
    const popup = window.open('', 'ferry-oauth', 'popup,width=520,height=720');
    const response = await fetch(${JSON.stringify(`${apiUrl}/oauth-connect`)}, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ${JSON.stringify(apiKey)} },
      body: JSON.stringify({
        projectIdOrName: ${JSON.stringify(projectName)},
        provider: 'sandbox',
        groupRef: 'browser-group',
        groupName: 'Browser Group',
        consumerRef: 'browser-user',
      }),
    });
    popup.location.href = await response.text();
  });
</script>
</body></html>`;
}

describeWithBrowser('OAuth in a real browser', () => {
  let oauth: OAuthStack;
  let builder: Server;
  let builderUrl: string;

  beforeAll(async () => {
    oauth = await startOAuthStack({ autoApprove: false });
    await createSandboxApp(oauth.stack);
    const html = builderPage(oauth.stack.urls.api, oauth.stack.project.apiKey, oauth.stack.project.name);
    builder = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(html);
    });
    await new Promise<void>((resolve) => builder.listen(0, '127.0.0.1', resolve));
    // localhost, not 127.0.0.1: the builder's app is another origin than Ferry's api host.
    builderUrl = `http://localhost:${(builder.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => {
      builder.close(() => resolve());
      builder.closeAllConnections();
    });
    await oauth.close();
  });

  it('connects the Sandbox CRM: popup, consent, Approve, and the page hears the new connection', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-default-apps',
        '--disable-extensions',
        '--disable-sync',
        '--no-first-run',
        '--metrics-recording-only',
      ],
    });
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(builderUrl);
      const popupOpened = context.waitForEvent('page');
      await page.click('#connect');
      const popup = await popupOpened;
      await popup.waitForURL(/\/oauth\/authorize\?/);
      await expect(popup.title()).resolves.toMatch(/Authorize/);
      expect(await popup.textContent('body')).toContain('wants to access your Sandbox CRM account');
      const popupClosed = popup.waitForEvent('close');
      await popup.getByRole('button', { name: 'Approve' }).click();
      await popupClosed; // the callback page posted its message and closed itself

      await page.waitForSelector('#result:not(:empty)');
      const result = JSON.parse((await page.textContent('#result'))!);
      expect(result).toMatchObject({
        type: 'ferry:oauth',
        status: 'success',
        connectionId: expect.any(String),
      });

      const connection = await oauth.stack.api(
        'GET',
        `/projects/${oauth.stack.project.name}/connections/${result.connectionId}`,
      );
      expect(connection.status).toBe(200);
      expect(connection.body).toMatchObject({
        provider: 'sandbox',
        status: 'working',
        authScheme: 'oauth2/authorizationCode',
        group: { groupRef: 'browser-group', groupName: 'Browser Group' },
        consumer: { consumerRef: 'browser-user' },
      });
    } finally {
      await browser.close();
    }
  });

  it('opened without a popup, the callback page itself shows the result', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    try {
      const page = await browser.newPage();
      const started = await oauth.stack.api<string>('POST', '/oauth-connect', {
        body: {
          projectIdOrName: oauth.stack.project.name,
          provider: 'sandbox',
          groupRef: 'tab-group',
          consumerRef: 'u',
        },
      });
      await page.goto(started.body);
      await page.getByRole('button', { name: 'Deny' }).click();
      await page.waitForURL(/\/v1\/oauth-callback\?/);
      expect(await page.textContent('h1')).toBe('The connection failed');
      expect(await page.textContent('#message')).toMatch(/Access was denied at sandbox/);
    } finally {
      await browser.close();
    }
  });
});
