import type { AuthMaterial } from './auth-material.js';
import { authMethodPresenting } from './catalog/auth-methods.js';
import { renderProviderTemplate, type Provider } from './catalog/index.js';
import { ConnectionSetupError } from './errors.js';

/** How a request carries a connection's credentials, as the catalog describes the method presenting them. */

function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/**
 * The Basic username a method sends: the given one in the method's `usernameFormat` (Zendesk's
 * `%s/token`), unless it is already in that form.
 */
export function formatBasicUsername(username: string, format: string | undefined): string {
  if (!format) return username;
  const [prefix, suffix] = format.split('%s');
  const formatted = username.startsWith(prefix) && username.endsWith(suffix);
  return formatted && username.length >= prefix.length + suffix.length
    ? username
    : format.replace('%s', username);
}

/**
 * Attaches credentials as the catalog describes the method that presents them (the main method, or
 * the alternative that takes this kind of credential); returns the secret strings it used.
 */
export function applyAuth(
  provider: Provider,
  material: AuthMaterial,
  templateVars: Record<string, string>,
  url: URL,
  headers: Record<string, string>,
): string[] {
  const method = authMethodPresenting(provider, material.type);
  const secrets: string[] = [];
  switch (material.type) {
    case 'oauth2':
      // A provider that takes the token in a header of its own (Shopify's X-Shopify-Access-Token) gets no Bearer.
      if (!method.customOpts?.headers?.some((header) => header.valueTemplate.includes('{{.accessToken}}')))
        headers.authorization = `Bearer ${material.accessToken}`;
      secrets.push(material.accessToken);
      break;
    case 'basic': {
      const username = formatBasicUsername(material.username, method.basicOpts?.usernameFormat);
      headers.authorization = basic(username, material.password);
      secrets.push(material.password, headers.authorization.slice('Basic '.length));
      break;
    }
    case 'apiKey': {
      secrets.push(material.apiKey);
      const keyOpts = method.apiKeyOpts;
      const asBasic = method.basicOpts?.apiKeyAsBasic ? method.basicOpts.apiKeyAsBasicOpts : undefined;
      if (keyOpts?.attachmentType === 'header' && keyOpts.header) {
        headers[keyOpts.header.name.toLowerCase()] = `${keyOpts.header.valuePrefix ?? ''}${material.apiKey}`;
      } else if (keyOpts?.attachmentType === 'query' && keyOpts.query) {
        url.searchParams.set(keyOpts.query.name, material.apiKey);
      } else if (method.basicOpts?.apiKeyAsBasic) {
        const value = (asBasic?.keyFormat ?? '%s').replace('%s', material.apiKey);
        headers.authorization = asBasic?.fieldUsed === 'password' ? basic('', value) : basic(value, '');
        secrets.push(headers.authorization.slice('Basic '.length));
      } else {
        throw new ConnectionSetupError(
          `Provider "${provider.name}" does not say where an API key goes; the connection cannot be used.`,
          provider.name,
        );
      }
      break;
    }
    case 'custom':
      secrets.push(...Object.values(material.values));
      break;
    case 'none':
      break;
  }
  const vars =
    material.type === 'apiKey'
      ? { ...templateVars, apiKey: material.apiKey }
      : material.type === 'oauth2'
        ? { ...templateVars, accessToken: material.accessToken }
        : material.type === 'custom'
          ? { ...templateVars, ...material.values }
          : templateVars;
  // Only the presenting method's own headers: Shopify's OAuth token header is not an API token's.
  for (const header of method.customOpts?.headers ?? []) {
    const value = renderProviderTemplate(header.valueTemplate, vars);
    headers[header.name.toLowerCase()] = value;
    secrets.push(value);
  }
  for (const param of method.customOpts?.queryParams ?? []) {
    const value = renderProviderTemplate(param.valueTemplate, vars);
    url.searchParams.set(param.name, value);
    secrets.push(value);
  }
  return secrets.filter((secret) => secret.length >= 4);
}
