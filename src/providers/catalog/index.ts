import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Provider } from '../../schemas/provider.js';
import { ProviderCatalogError, validateProviderFile } from './validate.js';

/**
 * Ferry's provider catalog: one JSON file per provider under `providers/`, read and validated once,
 * when this module is first imported, so a broken file stops Ferry at start. A provider with only catalog data still works for authentication and proxying;
 * `support` says which providers also have a deep connector (read, write, subscribe).
 *
 * URL templates hold `{{.name}}` placeholders, filled with `renderProviderTemplate`:
 * - most come from the connection's metadata, declared in the provider's `metadata.input`
 *   (entered by the user before authorization) or `metadata.postAuthentication` (learnt afterwards);
 * - `{{.sandboxURL}}` (`SANDBOX_URL_VARIABLE`) is not connection metadata: Ferry fills it from its own
 *   configuration, `FERRY_SANDBOX_URL` (`config.sandboxUrl`, default `http://127.0.0.1:8090`), because the
 *   bundled sandbox CRM is served by Ferry itself at an address known only at runtime.
 */

export { renderProviderTemplate, templateVariables, ProviderTemplateError } from './template.js';
export { ProviderCatalogError } from './validate.js';
export type { Provider } from '../../schemas/provider.js';

/** The placeholder Ferry fills from `FERRY_SANDBOX_URL`, never from connection metadata. */
export const SANDBOX_URL_VARIABLE = 'sandboxURL';

const providersDir = fileURLToPath(new URL('./providers/', import.meta.url));

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

function loadCatalog(): Readonly<Record<string, Provider>> {
  const files = readdirSync(providersDir)
    .filter((file) => file.endsWith('.json'))
    .sort();
  if (files.length === 0) throw new ProviderCatalogError(`No provider files found in ${providersDir}`);
  const providers: Record<string, Provider> = {};
  for (const file of files) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(join(providersDir, file), 'utf8'));
    } catch (error) {
      throw new ProviderCatalogError(
        `Provider catalog file ${file} is not valid JSON: ${(error as Error).message}`,
      );
    }
    const provider = validateProviderFile(file, parsed, file.slice(0, -'.json'.length));
    if (Object.hasOwn(providers, provider.name)) {
      throw new ProviderCatalogError(
        `Provider catalog file ${file} repeats the provider name "${provider.name}"`,
      );
    }
    providers[provider.name] = provider;
  }
  const sorted = Object.fromEntries(
    Object.keys(providers)
      .sort()
      .map((name) => [name, providers[name]]),
  );
  return deepFreeze(sorted);
}

const catalog = loadCatalog();

/** Every provider, keyed by name and sorted by name. The objects are frozen: copy before changing. */
export function listProviders(): Record<string, Provider> {
  return catalog;
}

export function getProvider(name: string): Provider | undefined {
  return Object.hasOwn(catalog, name) ? catalog[name] : undefined;
}

export function isKnownProvider(name: string): boolean {
  return Object.hasOwn(catalog, name);
}
