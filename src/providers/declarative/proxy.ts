import type { ProxyRequest } from '../connector.js';
import type { HttpMethod, ProviderHttpRequest } from '../http.js';
import type { DeclaredContext } from './context.js';

/** Proxied requests: a path under the provider's base URL, never the caller's own credentials. */

/** Headers a proxied request must not pass on: hop-by-hop ones and the caller's own credentials. */
const unforwardedHeaders = new Set([
  'authorization',
  'connection',
  'content-length',
  'cookie',
  'host',
  'keep-alive',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'x-api-key',
]);

const proxyMethods = new Set<string>(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The provider request of a proxied one: a path under the base URL, no caller credentials. */
export function proxied(connector: DeclaredContext, request: ProxyRequest): ProviderHttpRequest {
  if (!connector.capabilities.proxy) throw connector.unsupported('proxy');
  const method = request.method.toUpperCase();
  if (!proxyMethods.has(method)) throw connector.unsupported('proxy', `Method ${method} cannot be proxied.`);
  if (
    /^[a-z][a-z0-9+.-]*:/i.test(request.path) ||
    request.path.startsWith('//') ||
    /(^|\/)\.\.(\/|\?|$)/.test(request.path)
  ) {
    // The path is appended to the provider's base URL; an absolute URL would send credentials elsewhere.
    throw connector.unsupported('proxy', 'A proxied path must be relative to the provider’s base URL.');
  }
  const headers = Object.fromEntries(
    Object.entries(request.headers ?? {}).filter(([name]) => !unforwardedHeaders.has(name.toLowerCase())),
  );
  return {
    method: method as HttpMethod,
    path: `${request.path.startsWith('/') ? '' : '/'}${request.path}`,
    headers,
    body: request.body,
    // A proxied path may answer 401 for reasons of its own; only the connector's calls judge credentials.
    reportRejection: false,
    rawStatus: true,
  };
}
