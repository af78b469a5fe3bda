/**
 * The API reference (`/v1/docs`): Swagger UI served from node_modules, one document per listener
 * behind its switcher. Read in a real headless Chromium (skipped when /usr/bin/chromium is absent;
 * playwright-core never downloads a browser): every host's operations render, "Try it out" reaches
 * another listener, and no request leaves localhost.
 */
import { existsSync } from 'node:fs';
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { allRoutes } from '../../src/api/routes.js';
import type { Host } from '../../src/api/route.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';

const chromiumPath = '/usr/bin/chromium';
const describeWithBrowser = existsSync(chromiumPath) ? describe : describe.skip;
const listeners = ['api', 'read', 'write', 'search', 'proxy'] as const;

let stack: TestStack;
let apiOrigin: string;

beforeAll(async () => {
  stack = await startTestStack();
  apiOrigin = new URL(stack.urls.api).origin;
});
afterAll(() => stack?.close());

function operationIdsOf(listener: (typeof listeners)[number]): string[] {
  if (listener === 'proxy') return ['proxyGet', 'proxyPost', 'proxyPut', 'proxyPatch', 'proxyDelete'];
  return allRoutes()
    .filter((route) => (route.hosts ?? ['api']).includes(listener as Host))
    .map((route) => route.operationId);
}

describe('the reference page and its documents', () => {
  it('serves the page with a CSP that allows only its own scripts and the listeners it documents', async () => {
    const response = await fetch(`${apiOrigin}/v1/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    for (const listener of ['read', 'write', 'search'] as const) {
      expect(csp).toContain(`http://127.0.0.1:${new URL(stack.urls[listener]).port}`);
    }
    expect(csp).toContain(stack.urls.proxy);
    const html = await response.text();
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>/);
  });

  it('serves the documents of every listener, each with its own server, from any host', async () => {
    for (const origin of [apiOrigin, new URL(stack.urls.read).origin]) {
      for (const listener of listeners) {
        const response = await request('GET', `${origin}/v1/docs/openapi/${listener}.json`);
        expect(response.status).toBe(200);
        const expected = listener === 'proxy' ? stack.urls.proxy : new URL(stack.urls[listener]).origin;
        expect(response.body.servers[0].variables.origin.default).toBe(expected);
        const operationIds = Object.values(response.body.paths as Record<string, Record<string, any>>)
          .flatMap((item) => Object.values(item))
          .map((operation) => operation.operationId);
        expect(operationIds.sort()).toEqual(operationIdsOf(listener).sort());
      }
    }
  });

  it('serves only the assets the page loads, and a problem for anything else', async () => {
    const css = await fetch(`${apiOrigin}/v1/docs/assets/swagger-ui.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    for (const path of [
      '/v1/docs/assets/package.json',
      '/v1/docs/assets/..%2F..%2Fpackage.json',
      '/v1/docs/assets/index.html',
      '/v1/docs/openapi/nope.json',
      '/v1/docs/openapi/__proto__.json',
    ]) {
      const response = await fetch(`${apiOrigin}${path}`);
      expect([path, response.status]).toEqual([path, 404]);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  it('ignores a Host header that is not a plain host name', async () => {
    const { status, body } = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      get(`${apiOrigin}/v1/docs/openapi/read.json`, { headers: { host: 'evil;script-src *' } }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body: text }));
      }).on('error', reject);
    });
    expect(status).toBe(200);
    expect(JSON.parse(body).servers[0].variables.origin.default).toMatch(/^http:\/\/localhost:\d+$/);
  });
});

describeWithBrowser('the reference page in a real browser', () => {
  it('renders the operations of every listener, tries one on the read host, and stays on localhost', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
    });
    try {
      const page = await browser.newPage();
      const requested: string[] = [];
      const problems: string[] = [];
      page.on('request', (sent) => requested.push(sent.url()));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      await page.goto(`${apiOrigin}/v1/docs`);

      for (const listener of listeners) {
        await page.selectOption('.topbar select', listener);
        const title = listener === 'proxy' ? 'Ferry proxy' : `Ferry ${listener} API`;
        await page.locator('.info .title', { hasText: title }).waitFor();
        await page.waitForSelector('.opblock');
        const rendered = await page.$$eval('.opblock', (blocks) => blocks.map((block) => block.id));
        const missing = operationIdsOf(listener).filter(
          (operationId) => !rendered.some((id) => id.endsWith(`-${operationId}`)),
        );
        expect([listener, missing]).toEqual([listener, []]);
      }

      // Try it out, from the api host's page against the read host: pause an unknown installation.
      await page.selectOption('.topbar select', 'read');
      await page.waitForSelector('[id$="-pauseInstallationReads"]');
      // What the Authorize dialog does, through Swagger UI's own API (the page keeps it as `ui`).
      await page.evaluate((key) => {
        (globalThis as unknown as { ui: any }).ui.preauthorizeApiKey('apiKey', key);
      }, stack.project.apiKey);
      const operation = page.locator('[id$="-pauseInstallationReads"]');
      await operation.locator('.opblock-summary').click();
      await operation.locator('.try-out__btn').click();
      await operation.locator('input[placeholder="projectIdOrName"]').fill(stack.project.name);
      await operation.locator('input[placeholder="integrationId"]').fill('no-such-integration');
      await operation
        .locator('input[placeholder="installationId"]')
        .fill('00000000-0000-4000-8000-000000000000');
      await operation.locator('.execute').click();
      const status = operation.locator('.live-responses-table .response .response-col_status');
      await status.waitFor();
      expect((await status.textContent())?.trim()).toBe('404');
      expect(await operation.locator('.live-responses-table').textContent()).toContain('no-such-integration');
      expect(requested.some((url) => url.startsWith(`${new URL(stack.urls.read).origin}/v1/projects/`))).toBe(
        true,
      );

      const elsewhere = requested.filter(
        (url) => !/^(http:\/\/(127\.0\.0\.1|localhost)[:/]|data:)/.test(url),
      );
      expect(elsewhere).toEqual([]);
      // A 404 of the try-it is logged by Chromium as a failed resource; nothing else may be.
      expect(problems.filter((text) => !/status of 404/.test(text))).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
