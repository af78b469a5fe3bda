import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Router from '@koa/router';
import { buildOpenApiDocument } from './openapi.js';
import { proxyOpenApiDocument } from './proxy/openapi.js';
import { listenerOrigins, listeners, type Listener, type ListenerPorts } from './listener-origins.js';
import { requestSettings, type AnyRoute, type Host } from './route.js';

/**
 * The API reference: Swagger UI (swagger-ui-dist, served from node_modules, no CDN) over one OpenAPI
 * document per listener, with its document switcher, so every host's operations (the read host's
 * trigger and pause among them) can be read and tried from any host's `/v1/docs`. Each document's
 * `servers` names its own listener, so "Try it out" sends the request to the right port.
 */

/** The files of swagger-ui-dist the page loads; nothing else of node_modules is served. */
const assets: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const assetDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const assetCache = new Map<string, Buffer>();

function asset(name: string): Buffer {
  let bytes = assetCache.get(name);
  if (!bytes) {
    bytes = readFileSync(join(assetDir, name));
    assetCache.set(name, bytes);
  }
  return bytes;
}

const securityHeaders = (connect: string[]) => ({
  'Content-Security-Policy': [
    "default-src 'none'",
    "script-src 'self'",
    // Swagger UI sets element styles at run time.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self' ${connect.join(' ')}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
});

function page(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ferry API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/v1/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/v1/docs/assets/favicon-32x32.png">
<link rel="alternate" type="application/json" href="/v1/openapi.json" title="This host’s OpenAPI document">
</head><body><div id="swagger-ui"></div>
<script src="/v1/docs/assets/swagger-ui-bundle.js"></script>
<script src="/v1/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/v1/docs/init.js"></script>
</body></html>`;
}

/**
 * The page's start script (a file, not inline, so the CSP needs no `unsafe-inline` script): the five
 * documents, this host's first, and a request interceptor for the proxy, whose `{path}` parameter is
 * a whole provider path that Swagger UI would otherwise send with its slashes encoded (which the
 * proxy refuses).
 */
function initScript(host: Host, proxyOrigin: string): string {
  const urls = [host, ...listeners.filter((listener) => listener !== host)].map((listener) => ({
    name: listener,
    url: `/v1/docs/openapi/${listener}.json`,
  }));
  return `'use strict';
window.ui = SwaggerUIBundle({
  urls: ${JSON.stringify(urls)},
  'urls.primaryName': ${JSON.stringify(host)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
  validatorUrl: null,
  displayRequestDuration: true,
  persistAuthorization: false,
  requestInterceptor: (request) => {
    const proxyOrigin = ${JSON.stringify(proxyOrigin)};
    if (request.url.startsWith(proxyOrigin + '/')) {
      const url = new URL(request.url);
      request.url = proxyOrigin + url.pathname.replace(/%2F/gi, '/') + url.search;
    }
    return request;
  },
});
`;
}

/** Mounts `/v1/docs` (the page, its script and assets) and the documents of every listener. */
export function mountDocs(router: Router, host: Host, routes: AnyRoute[], ports: ListenerPorts): void {
  const routesOf = (listener: Host) => routes.filter((route) => (route.hosts ?? ['api']).includes(listener));
  router.get('/v1/docs', (ctx) => {
    const known = listenerOrigins(ctx, host, ports, requestSettings(ctx));
    ctx.set(securityHeaders(Object.values(known)));
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page();
  });
  router.get('/v1/docs/init.js', (ctx) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = initScript(host, listenerOrigins(ctx, host, ports, requestSettings(ctx)).proxy);
  });
  router.get('/v1/docs/assets/:name', (ctx) => {
    const type = Object.hasOwn(assets, ctx.params.name) ? assets[ctx.params.name] : undefined;
    if (!type) return;
    ctx.set({ 'Cache-Control': 'public, max-age=86400', 'X-Content-Type-Options': 'nosniff' });
    ctx.type = type;
    ctx.body = asset(ctx.params.name);
  });
  router.get('/v1/docs/openapi/:listener.json', (ctx) => {
    const listener = ctx.params.listener as Listener;
    if (!listeners.includes(listener)) return;
    const origin = listenerOrigins(ctx, host, ports, requestSettings(ctx))[listener];
    const servers = [
      {
        url: '{origin}',
        description: `The ${listener} listener`,
        variables: { origin: { default: origin, description: 'Scheme, host and port of the listener' } },
      },
    ];
    ctx.body =
      listener === 'proxy'
        ? proxyOpenApiDocument(servers)
        : buildOpenApiDocument(listener, routesOf(listener), servers);
  });
}
