import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConnectorCapabilities } from '../../schemas/capabilities.js';
import type { ConnectorDeclaration } from '../../schemas/connector-declaration.js';
import type { Provider, ProviderFile, ProviderOverride, ProviderSupport } from '../../schemas/provider.js';
import { config, type Config } from '../../config.js';
import { declaredCapabilities, loadConnectorDeclarations } from './connector-declarations.js';
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

/** Where this deployment serves the bundled sandbox provider (FERRY_SANDBOX_URL), for `{{.sandboxURL}}`. */
export function sandboxUrl(): string {
  return config().sandboxUrl;
}

const providersDir = fileURLToPath(new URL('./providers/', import.meta.url));

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** What Ferry supports for a provider: proxying always, the rest as its connector declares. */
function supportOf(declaration: ConnectorDeclaration | undefined): ProviderSupport {
  const capabilities: Omit<ConnectorCapabilities, 'proxy'> | undefined =
    declaration && declaredCapabilities(declaration);
  const subscribe = capabilities?.subscribe ?? false;
  return {
    bulkWrite: { insert: false, update: false, upsert: false, delete: false },
    proxy: true,
    read: capabilities?.read ?? false,
    subscribe,
    write: capabilities?.write ?? false,
    delete: capabilities?.delete ?? false,
    search: { operators: { equals: capabilities?.search ?? false } },
    subscribeSupport: { create: subscribe, update: subscribe, delete: subscribe, passThrough: false },
  };
}

function readProviderFiles(): Record<string, ProviderFile> {
  const files = readdirSync(providersDir)
    .filter((file) => file.endsWith('.json'))
    .sort();
  if (files.length === 0) throw new ProviderCatalogError(`No provider files found in ${providersDir}`);
  const providers: Record<string, ProviderFile> = {};
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
  return providers;
}

function loadCatalog(): {
  providers: Readonly<Record<string, Provider>>;
  declarations: ReadonlyMap<string, ConnectorDeclaration>;
} {
  const files = readProviderFiles();
  const declarations = loadConnectorDeclarations(new Set(Object.keys(files)));
  const providers: Record<string, Provider> = {};
  for (const name of Object.keys(files).sort()) {
    const { modules, ...file } = files[name];
    const support = supportOf(declarations.get(name));
    providers[name] = {
      ...file,
      support,
      ...(modules && {
        modules: Object.fromEntries(
          Object.entries(modules).map(([id, module]) => [id, { ...module, support }]),
        ),
      }),
    };
  }
  for (const declaration of declarations.values()) deepFreeze(declaration);
  return { providers: deepFreeze(providers), declarations };
}

const { providers: catalog, declarations } = loadCatalog();

/** The provider's deep connector declaration, when it has one. */
export function connectorDeclaration(name: string): ConnectorDeclaration | undefined {
  return declarations.get(name);
}

/** Auth options with a deployment's authorization and token endpoints in place of the catalog's. */
function overriddenAuthOpts<T extends Pick<Provider, 'oauth2Opts' | 'jwtOpts'>>(
  opts: T,
  override: ProviderOverride,
): Pick<Provider, 'oauth2Opts' | 'jwtOpts'> {
  const oauth2Opts = opts.oauth2Opts && {
    ...opts.oauth2Opts,
    ...(override.authURL && { authURL: override.authURL }),
    ...(override.tokenURL && { tokenURL: override.tokenURL }),
  };
  const jwtOpts = opts.jwtOpts && {
    ...opts.jwtOpts,
    ...(override.tokenURL && { tokenURL: override.tokenURL }),
  };
  return { ...(oauth2Opts && { oauth2Opts }), ...(jwtOpts && { jwtOpts }) };
}

/** A provider with a deployment's endpoint overrides applied, to its main and alternative methods. */
function overridden(provider: Provider, override: ProviderOverride): Provider {
  const alternativeAuth = provider.alternativeAuth?.map((alternative) => ({
    ...alternative,
    ...overriddenAuthOpts(alternative, override),
  }));
  const modules =
    provider.modules &&
    Object.fromEntries(
      Object.entries(provider.modules).map(([id, module]) => [
        id,
        override.modules?.[id] ? { ...module, baseURL: override.modules[id].baseURL } : module,
      ]),
    );
  return {
    ...provider,
    ...(override.baseURL && { baseURL: override.baseURL }),
    ...overriddenAuthOpts(provider, override),
    ...(alternativeAuth && { alternativeAuth }),
    ...(modules && { modules }),
  };
}

let effective: { config: Config; providers: Readonly<Record<string, Provider>> } | undefined;

/** The catalog as this deployment uses it: FERRY_PROVIDER_OVERRIDES applied, built once per configuration. */
function effectiveCatalog(): Readonly<Record<string, Provider>> {
  const current = config();
  if (effective?.config === current) return effective.providers;
  const providers: Record<string, Provider> = { ...catalog };
  for (const [name, override] of Object.entries(current.providerOverrides)) {
    if (!Object.hasOwn(catalog, name)) {
      throw new ProviderCatalogError(
        `FERRY_PROVIDER_OVERRIDES names "${name}", which is not in the catalog.`,
      );
    }
    providers[name] = deepFreeze(overridden(catalog[name], override));
  }
  effective = { config: current, providers: Object.freeze(providers) };
  return effective.providers;
}

/** Every provider, keyed by name and sorted by name. The objects are frozen: copy before changing. */
export function listProviders(): Readonly<Record<string, Provider>> {
  return effectiveCatalog();
}

export function getProvider(name: string): Provider | undefined {
  const providers = effectiveCatalog();
  return Object.hasOwn(providers, name) ? providers[name] : undefined;
}

export function isKnownProvider(name: string): boolean {
  return Object.hasOwn(catalog, name);
}
