import type { TSchema } from 'typebox';
import { ProblemSchema } from '../schemas/common.js';
import type { Host, AnyRoute } from './route.js';

const securitySchemes = {
  apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
  bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
};

function parameters(schema: TSchema | undefined, location: 'path' | 'query'): unknown[] {
  const object = schema as { properties?: Record<string, TSchema>; required?: string[] } | undefined;
  return Object.entries(object?.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (object?.required ?? []).includes(name),
    schema: property,
    ...((property as { description?: string }).description && {
      description: (property as { description?: string }).description,
    }),
  }));
}

const pathParams = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);

/**
 * OpenAPI links from each create (a 201 whose body has an `id`) to the operations on the created
 * resource (its path plus one `{param}` segment), so clients and stateful fuzzers can chain a
 * create with the reads, updates and deletes of what it made. Derived from the paths, so a new
 * resource gets its links without declaring them.
 */
function linksOf(route: AnyRoute, routes: AnyRoute[]): Record<string, unknown> | undefined {
  const created = route.responses[201]?.schema as { properties?: Record<string, unknown> } | undefined;
  if (route.method !== 'POST' || !created?.properties?.id) return undefined;
  const links: Record<string, unknown> = {};
  for (const other of routes) {
    const rest = other.path.startsWith(`${route.path}/`) ? other.path.slice(route.path.length + 1) : '';
    const param = /^\{(\w+)\}$/.exec(rest)?.[1];
    if (!param || other.method === 'POST') continue;
    links[other.operationId] = {
      operationId: other.operationId,
      parameters: {
        ...Object.fromEntries(pathParams(route.path).map((name) => [name, `$request.path.${name}`])),
        [param]: '$response.body#/id',
      },
    };
  }
  return Object.keys(links).length ? links : undefined;
}

/** The OpenAPI 3.1 document of one host, derived from the same route declarations that serve it. */
export function buildOpenApiDocument(host: Host, routes: AnyRoute[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const operation = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description && { description: route.description }),
      tags: route.tags,
      ...(route.deprecated && { deprecated: true }),
      security: route.auth.includes('none')
        ? []
        : [...new Set(route.auth.map((scheme) => (scheme === 'projectJwt' ? 'bearer' : scheme)))].map(
            (scheme) => ({
              [scheme]: [],
            }),
          ),
      parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
      ...(route.body && {
        requestBody: { required: true, content: { 'application/json': { schema: route.body } } },
      }),
      responses: {
        ...Object.fromEntries(
          Object.entries(route.responses).map(([status, response]) => [
            status,
            {
              description: response.description,
              ...(status === '201' && linksOf(route, routes) && { links: linksOf(route, routes) }),
              ...(response.schema && {
                content: {
                  // Errors are sent as problem details, whatever the route declares.
                  [response.contentType ??
                  (Number(status) >= 400 ? 'application/problem+json' : 'application/json')]: {
                    schema: response.schema,
                  },
                },
              }),
            },
          ]),
        ),
        default: {
          description: 'A problem',
          content: { 'application/problem+json': { schema: ProblemSchema } },
        },
      },
    };
    paths[`/v1${route.path}`] ??= {};
    paths[`/v1${route.path}`][route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: `Ferry ${host} API`,
      version: '1.0.0',
      description: 'Ferry moves records between SaaS providers and your systems, durably.',
    },
    servers: [{ url: '/' }],
    components: { securitySchemes },
    paths,
  };
}

/** A self-contained reference page (no CDN), rendered in the browser from `/v1/openapi.json`. */
export function referencePage(host: Host): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ferry ${host} API reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1d2330}
h1{font-size:1.6rem}h2{font-size:1.1rem;margin-top:2rem;border-bottom:1px solid #ddd}
.op{margin:.5rem 0;border:1px solid #e3e6ec;border-radius:6px}
.op summary{cursor:pointer;padding:.4rem .6rem;font-family:ui-monospace,monospace}
.m{display:inline-block;min-width:4.5rem;font-weight:700}.GET{color:#0a7}.POST{color:#06c}.PUT{color:#a60}.PATCH{color:#a0a}.DELETE{color:#c22}
pre{background:#f6f8fa;padding:.6rem;overflow:auto;font-size:12px;margin:0 .6rem .6rem}
</style></head>
<body><h1>Ferry ${host} API</h1><p>Machine-readable: <a href="/v1/openapi.json">/v1/openapi.json</a></p><div id="ops">Loading…</div>
<script>
fetch('/v1/openapi.json').then(r=>r.json()).then(doc=>{
  const byTag={};
  for(const [path,item] of Object.entries(doc.paths)) for(const [method,op] of Object.entries(item)){
    (byTag[op.tags?.[0]||'other'] ||= []).push({path,method:method.toUpperCase(),op});
  }
  const esc=s=>String(s).replace(/[&<>]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));
  document.getElementById('ops').innerHTML=Object.entries(byTag).map(([tag,ops])=>'<h2>'+esc(tag)+'</h2>'+ops.map(({path,method,op})=>
    '<details class="op"><summary><span class="m '+method+'">'+method+'</span>'+esc(path)+' — '+esc(op.summary||'')+'</summary>'+
    '<pre>'+esc(JSON.stringify({security:op.security,parameters:op.parameters,requestBody:op.requestBody,responses:op.responses},null,2))+'</pre></details>').join('')).join('');
});
</script></body></html>`;
}
