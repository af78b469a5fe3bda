import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { projectRoot } from '../config.js';
import { requestSettings } from './route.js';
import { ProblemError } from '../core/problem.js';
import { listenerOrigins, type ListenerPorts } from './listener-origins.js';

/**
 * The builder console: a static bundle (`npm run build:console`, from `console/`) served by the api
 * host at `/console`. It calls the public API only, the api host's on the same origin and the
 * read, write and search hosts at the URLs `/console/config.json` names.
 */
export const consoleDist = join(projectRoot, 'console', 'dist');

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

type OtherHost = 'read' | 'write' | 'search';

/** Where the browser reaches the read, write and search hosts (their API roots). */
function hostUrls(ctx: Context, ports: ListenerPorts): Record<OtherHost, string> {
  const settings = requestSettings(ctx);
  const origins = listenerOrigins(ctx, 'api', ports, settings);
  const configured = settings.publicHostUrls;
  const at = (host: OtherHost) => configured[host] ?? `${origins[host]}/v1`;
  return { read: at('read'), write: at('write'), search: at('search') };
}

function consoleConfig(ctx: Context, ports: ListenerPorts) {
  const { temporalUiUrl, temporal } = requestSettings(ctx);
  return {
    apiUrl: '/v1',
    hosts: hostUrls(ctx, ports),
    temporal: {
      uiUrl: temporalUiUrl,
      namespace: temporal.namespace,
      /** An installation's workflow page: replace `{installationId}`. */
      installationUrl: `${temporalUiUrl}/namespaces/${encodeURIComponent(temporal.namespace)}/workflows/installation%2F{installationId}`,
    },
  };
}

/** A strict policy: the bundle's own scripts and styles only; calls to Ferry's hosts only. */
function contentSecurityPolicy(ctx: Context, ports: ListenerPorts): string {
  const origins = Object.values(hostUrls(ctx, ports)).map((url) => new URL(url).origin);
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self' ${[...new Set(origins)].join(' ')}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function secure(ctx: Context, ports: ListenerPorts): void {
  ctx.set('Content-Security-Policy', contentSecurityPolicy(ctx, ports));
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
}

/** The bundle's files, read once: a built console does not change under a running server. */
let files: Map<string, Buffer> | undefined;

function bundle(): Map<string, Buffer> {
  if (files) return files;
  if (!existsSync(join(consoleDist, 'index.html'))) {
    throw new ProblemError({
      status: 503,
      detail: 'The console is not built.',
      remedy: 'Run `npm run build:console` (npm ci and npm start do it).',
    });
  }
  const found = new Map<string, Buffer>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else found.set(relative(consoleDist, path).split('\\').join('/'), readFileSync(path));
    }
  };
  walk(consoleDist);
  files = found;
  return found;
}

export function mountConsole(router: Router, ports: ListenerPorts): void {
  router.get('/console/config.json', (ctx) => {
    secure(ctx, ports);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = consoleConfig(ctx, ports);
  });
  router.get(['/console', '/console/{*path}'], (ctx) => {
    // The router matches with and without a trailing slash: only the bare path is sent on.
    if (ctx.path === '/console') return ctx.redirect('/console/');
    const param = ctx.params.path as string | string[] | undefined;
    const path = (Array.isArray(param) ? param.join('/') : param) || 'index.html';
    const file = bundle().get(path);
    if (!file) throw ProblemError.notFound(`The console has no file ${path}.`);
    secure(ctx, ports);
    // Hashed asset names never change content; the page itself is always fetched fresh.
    ctx.set('Cache-Control', path.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.type = types[extname(path)] ?? 'application/octet-stream';
    ctx.body = file;
  });
}
