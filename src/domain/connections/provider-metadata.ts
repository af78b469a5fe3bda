import { ProblemError, type ProblemIssue } from '../../core/problem.js';
import {
  renderProviderTemplate,
  SANDBOX_URL_VARIABLE,
  sandboxUrl,
  templateVariables,
  type Provider,
} from '../../providers/catalog/index.js';
import type { ProviderMetadata, ProviderMetadataInputValue } from '../../schemas/connections.js';

/**
 * A connection's provider metadata and the provider URLs it fills in: metadata as given or stored,
 * the values for each URL's `{{.name}}` placeholders, and the checks that keep those values from
 * pointing the customer's credentials at another host.
 */

export function normaliseProviderMetadata(
  input: ProviderMetadataInputValue | undefined,
  source = 'input',
): ProviderMetadata {
  const result: ProviderMetadata = {};
  for (const [name, entry] of Object.entries(input ?? {})) {
    result[name] =
      typeof entry === 'string'
        ? { value: entry, source }
        : { value: entry.value, source: entry.source ?? source };
  }
  return result;
}

function metadataValue(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (entry && typeof entry === 'object' && typeof (entry as { value?: unknown }).value === 'string')
    return (entry as { value: string }).value;
  return undefined;
}

/**
 * Values for the `{{.name}}` placeholders of a provider's URLs: the catalog's defaults, then the
 * connection's metadata, `workspace` from its workspace ref, and `sandboxURL` from Ferry's config.
 */
export function templateVars(
  provider: Provider | undefined,
  connection: { providerWorkspaceRef?: string | null; providerMetadata?: Record<string, unknown> },
): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const input of provider?.metadata?.input ?? []) {
    if (input.defaultValue) vars[input.name] = input.defaultValue;
  }
  for (const [name, entry] of Object.entries(connection.providerMetadata ?? {})) {
    const value = metadataValue(entry);
    if (value !== undefined && value !== '') vars[name] = value;
  }
  if (connection.providerWorkspaceRef) vars.workspace = connection.providerWorkspaceRef;
  vars[SANDBOX_URL_VARIABLE] = sandboxUrl();
  return vars;
}

/** Where a caller sets each template variable, for issues that name the missing ones. */
function fieldOfVariable(name: string): string {
  return name === 'workspace' ? 'providerWorkspaceRef' : `providerMetadata.${name}`;
}

/** Every URL template of the provider, those of its alternative auth methods included. */
function providerUrlTemplates(provider: Provider): string[] {
  return [
    provider.baseURL,
    ...[provider, ...(provider.alternativeAuth ?? [])].flatMap((method) => [
      method.oauth2Opts?.authURL,
      method.oauth2Opts?.tokenURL,
      method.jwtOpts?.tokenURL,
      method.jwtOpts?.audience,
    ]),
    provider.authHealthCheck?.url,
    ...Object.values(provider.modules ?? {}).map((module) => module.baseURL),
  ].filter((template): template is string => typeof template === 'string');
}

const hostSafeValue = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/** A self-hosted instance's origin: https, a host name, an optional port, nothing after. */
const httpsOrigin = /^https:\/\/[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::\d{1,5})?$/;

/**
 * Variables a template starts with, `{{.workspace}}/rest/v11_24`: the value is the whole origin of a
 * self-hosted instance (SugarCRM). Only providers whose credentials are the user's own for that
 * instance use these (never a provider app's client secret: such providers have no browser flow).
 */
function originVariables(templates: string[]): Set<string> {
  return new Set(
    templates
      .map((template) => /^\{\{\s*\.([A-Za-z0-9_]+)\s*\}\}/.exec(template)?.[1])
      .filter((name): name is string => name !== undefined),
  );
}

/**
 * Metadata values that land in a provider's URLs must be host-name material: a value such as
 * `evil.example/` or `x@evil.example` would send the customer's credentials elsewhere.
 */
export function checkTemplateValues(provider: Provider, metadata: ProviderMetadata, prefix = ''): void {
  const templates = providerUrlTemplates(provider);
  const used = new Set(templates.flatMap(templateVariables));
  const inputs = new Map((provider.metadata?.input ?? []).map((input) => [input.name, input]));
  const origins = originVariables(templates);
  const issues: ProblemIssue[] = [];
  for (const [name, entry] of Object.entries(metadata)) {
    if (origins.has(name) && name !== SANDBOX_URL_VARIABLE) {
      if (!httpsOrigin.test(entry.value)) {
        issues.push({
          in: 'body',
          name: `${prefix}providerMetadata.${name}`,
          value: entry.value,
          detail: `${name} is the address of your ${provider.name} instance: https://, a host name, an optional port and nothing else (e.g. https://acme.example.com)`,
        });
      }
      continue;
    }
    const allowed = inputs.get(name)?.allowedValues;
    // A value that is the whole host could point credentials anywhere: only listed hosts will do.
    // (`https://{{.workspace}}.api-us1.com` keeps the host under the provider's domain: not whole.)
    const wholeHost = templates.some((template) => {
      const host = `//{{.${name}}}`;
      const at = template.indexOf(host);
      return at >= 0 && /^([/:?#]|$)/.test(template.slice(at + host.length));
    });
    if (used.has(name) && (allowed || wholeHost) && !(allowed ?? []).includes(entry.value)) {
      issues.push({
        in: 'body',
        name: `${prefix}providerMetadata.${name}`,
        value: entry.value,
        detail: `${name} must be one of: ${(allowed ?? []).join(', ') || '(no value is allowed)'}`,
      });
      continue;
    }
    if (used.has(name) && name !== SANDBOX_URL_VARIABLE && !hostSafeValue.test(entry.value)) {
      issues.push({
        in: 'body',
        name: `${prefix}providerMetadata.${name}`,
        value: entry.value,
        detail: `${name} is part of ${provider.name}’s URLs, so it may hold only letters, digits, ".", "-" and "_"`,
      });
    }
    if (name === SANDBOX_URL_VARIABLE) {
      issues.push({
        in: 'body',
        name: `${prefix}providerMetadata.${name}`,
        detail: `${SANDBOX_URL_VARIABLE} is set by Ferry (FERRY_SANDBOX_URL), not by connections`,
      });
    }
  }
  if (issues.length) throw ProblemError.invalid(issues);
}

/** Fills a provider URL template; a missing variable is a 400 naming the body field that sets it. */
export function renderProviderUrl(template: string, vars: Record<string, string>, prefix = ''): string {
  const origins = originVariables([template]);
  const field = (name: string) => (origins.has(name) ? `providerMetadata.${name}` : fieldOfVariable(name));
  const missing = templateVariables(template).filter((name) => !vars[name]);
  if (missing.length) {
    throw ProblemError.invalid(
      missing.map((name) => ({
        in: 'body' as const,
        name: `${prefix}${field(name)}`,
        detail: `this provider’s URL ${template} needs "${name}"; set ${field(name)}`,
      })),
    );
  }
  // An origin may have come from providerWorkspaceRef, which checkTemplateValues does not see.
  const notOrigins = [...origins].filter(
    (name) => name !== SANDBOX_URL_VARIABLE && !httpsOrigin.test(vars[name]),
  );
  if (notOrigins.length) {
    throw ProblemError.invalid(
      notOrigins.map((name) => ({
        in: 'body' as const,
        name: `${prefix}${field(name)}`,
        detail: `this provider’s URL ${template} starts with "${name}", which must be an https origin such as https://acme.example.com`,
      })),
    );
  }
  return renderProviderTemplate(template, vars);
}
