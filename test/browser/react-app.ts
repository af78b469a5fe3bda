import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext } from 'playwright-core';

export const chromiumPath = '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);

/**
 * Builds test/fixtures/react-app with Vite into a temporary directory, its API base URL set to
 * `apiOrigin` (Ferry's api host, without `/v1`: the package appends it).
 */
export async function buildReactApp(apiOrigin: string): Promise<{ dir: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-react-app-'));
  await promisify(execFile)(
    process.execPath,
    [new URL('./build-react-app.mjs', import.meta.url).pathname, dir, apiOrigin],
    { timeout: 120_000 },
  );
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface ServedApp {
  /** `http://localhost:<port>`: another origin than Ferry's api host (127.0.0.1), so CORS applies. */
  url: string;
  close(): Promise<void>;
}

/**
 * The builder's web server: the built files, and `/token?groupRef=&consumerRef=` where the builder's
 * backend mints a project JWT for the page (when `mintToken` is given).
 */
export async function serveReactApp(
  dir: string,
  mintToken?: (claims: { groupRef: string; consumerRef: string }) => Promise<string>,
): Promise<ServedApp> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/token' && mintToken) {
      const groupRef = url.searchParams.get('groupRef') ?? '';
      const consumerRef = url.searchParams.get('consumerRef') ?? '';
      mintToken({ groupRef, consumerRef }).then(
        (token) => {
          res.setHeader('content-type', 'text/plain');
          res.end(token);
        },
        () => {
          res.statusCode = 500;
          res.end();
        },
      );
      return;
    }
    const path = normalize(url.pathname === '/' ? '/index.html' : url.pathname);
    const file = join(dir, path);
    if (!file.startsWith(dir) || !existsSync(file)) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', types[extname(file)] ?? 'application/octet-stream');
    res.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface OfflineBrowser {
  browser: Browser;
  context: BrowserContext;
  /** Requests the page tried to send off this machine; each was aborted, nothing was downloaded. */
  blocked: string[];
  close(): Promise<void>;
}

const loopback = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Headless Chromium that reaches only loopback addresses: anything else is aborted and listed. */
export async function launchOfflineBrowser(): Promise<OfflineBrowser> {
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
  const context = await browser.newContext();
  const blocked: string[] = [];
  await context.route(
    (url) => !['data:', 'blob:'].includes(url.protocol) && !loopback.has(url.hostname),
    async (route) => {
      blocked.push(route.request().url());
      await route.abort('blockedbyclient');
    },
  );
  return { browser, context, blocked, close: () => browser.close() };
}
