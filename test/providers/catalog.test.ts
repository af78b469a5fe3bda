import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Compile } from 'typebox/compile';
import {
  connectorDeclaration,
  getProvider,
  isKnownProvider,
  listProviders,
  ProviderCatalogError,
  ProviderTemplateError,
  renderProviderTemplate,
  SANDBOX_URL_VARIABLE,
  templateVariables,
} from '../../src/providers/catalog/index.js';
import { validateProviderFile } from '../../src/providers/catalog/validate.js';
import {
  acceptedCredentialKinds,
  authMethodFor,
  authMethods,
  providerWithAuthMethod,
} from '../../src/providers/catalog/auth-methods.js';
import { declaredCapabilities } from '../../src/providers/catalog/connector-declarations.js';
import { hasDeepConnector } from '../../src/providers/connectors/index.js';
import { ProviderMapSchema, ProviderFileSchema, type Provider } from '../../src/schemas/provider.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const providersDir = join(repoRoot, 'src/providers/catalog/providers');
const factsFile = join(repoRoot, '../shared/data/provider-facts.tsv');
const sandboxes = ['sandbox', 'sandboxApiKey'];
/** Real providers Ferry lists beyond provider-facts.tsv, with why (see SOURCES.md). */
const beyondFacts: Record<string, string> = {
  googleServiceAccount: 'jwt: Google service accounts (JWT bearer grant)',
  docusignJWT: 'jwt: DocuSign JWT grant',
  hackerNews: 'none: a public API without credentials',
  trello: 'custom: key and token as query parameters',
};

const files = readdirSync(providersDir).filter((file) => file.endsWith('.json'));
const raw = files.map((file) => ({
  file,
  value: JSON.parse(readFileSync(join(providersDir, file), 'utf8')) as Provider,
}));
const providers = Object.values(listProviders());
const real = providers.filter((provider) => !sandboxes.includes(provider.name));

/** Every URL of a provider that Ferry renders, with where it sits. */
function urlsOf(provider: Provider): [string, string][] {
  const urls: [string, string | undefined][] = [
    ['baseURL', provider.baseURL],
    ['oauth2Opts.authURL', provider.oauth2Opts?.authURL],
    ['oauth2Opts.tokenURL', provider.oauth2Opts?.tokenURL],
    ['jwtOpts.tokenURL', provider.jwtOpts?.tokenURL],
    ['authHealthCheck.url', provider.authHealthCheck?.url],
    ...(provider.alternativeAuth ?? []).flatMap((alternative, index): [string, string | undefined][] => [
      [`alternativeAuth.${index}.oauth2Opts.authURL`, alternative.oauth2Opts?.authURL],
      [`alternativeAuth.${index}.oauth2Opts.tokenURL`, alternative.oauth2Opts?.tokenURL],
      [`alternativeAuth.${index}.jwtOpts.tokenURL`, alternative.jwtOpts?.tokenURL],
    ]),
    ...Object.entries(provider.modules ?? {}).map(([id, module]): [string, string] => [
      `modules.${id}.baseURL`,
      module.baseURL,
    ]),
  ];
  return urls.filter((entry): entry is [string, string] => entry[1] !== undefined);
}

function declaredVariables(provider: Provider): Set<string> {
  return new Set([
    ...(provider.metadata?.input ?? []).map((input) => input.name),
    ...(provider.metadata?.postAuthentication ?? []).map((input) => input.name),
  ]);
}

describe('provider catalog files', () => {
  const checker = Compile(ProviderFileSchema);

  it('each validates against the Provider schema', () => {
    expect(files.length).toBeGreaterThan(0);
    const invalid = raw.filter(({ value }) => !checker.Check(value)).map(({ file }) => file);
    expect(invalid).toEqual([]);
  });

  it('name each provider after their file, once', () => {
    for (const { file, value } of raw) expect(`${value.name}.json`).toBe(file);
    const names = raw.map(({ value }) => value.name);
    expect(new Set(names).size).toBe(names.length);
    expect(Object.keys(listProviders())).toEqual(names.slice().sort());
  });

  it('hold at least 40 real providers and both sandboxes', () => {
    expect(real.length).toBeGreaterThanOrEqual(40);
    for (const name of sandboxes) expect(isKnownProvider(name)).toBe(true);
  });

  it('give OAuth2 providers oauth2Opts with https endpoints', () => {
    for (const provider of providers.filter((p) => p.authType === 'oauth2')) {
      const opts = provider.oauth2Opts;
      expect({ name: provider.name, hasOpts: opts !== undefined }).toEqual({
        name: provider.name,
        hasOpts: true,
      });
      if (!opts) continue;
      if (opts.grantType.startsWith('authorizationCode')) expect(opts.authURL).toBeDefined();
      const endpoints = [opts.authURL, opts.tokenURL].filter((url): url is string => url !== undefined);
      for (const url of endpoints) {
        // SugarCRM is self-hosted: its URLs start with the instance's origin, which must be https.
        const ok =
          url.startsWith('https://') ||
          (sandboxes.includes(provider.name) && url.startsWith('{{.sandboxURL}}/')) ||
          (provider.name === 'sugarCRM' && url.startsWith('{{.workspace}}/'));
        expect({ name: provider.name, url, ok }).toEqual({ name: provider.name, url, ok: true });
      }
    }
  });

  it('give JWT providers jwtOpts with an https token endpoint and documentation', () => {
    const jwt = providers.filter((p) => p.authType === 'jwt');
    expect(jwt.map((p) => p.name)).toEqual(['docusignJWT', 'googleServiceAccount']);
    for (const provider of jwt) {
      expect(provider.jwtOpts?.tokenURL).toMatch(/^https:\/\//);
      expect(provider.jwtOpts?.docsURL).toMatch(/^https:\/\//);
      expect(provider.jwtOpts?.algorithm ?? 'RS256').toBe('RS256');
    }
    expect(getProvider('googleServiceAccount')!.jwtOpts).toMatchObject({
      tokenURL: 'https://oauth2.googleapis.com/token',
      scopeClaim: true,
      subjectRequired: false,
    });
    expect(getProvider('docusignJWT')!.jwtOpts).toMatchObject({
      audience: 'account.docusign.com',
      subjectRequired: true,
    });
  });

  it('give only JWT providers jwtOpts, and custom providers an input for every template variable', () => {
    for (const provider of providers) {
      expect({ name: provider.name, jwtOpts: provider.jwtOpts !== undefined }).toEqual({
        name: provider.name,
        jwtOpts: provider.authType === 'jwt',
      });
      if (provider.authType !== 'custom') continue;
      const inputs = new Set((provider.customOpts?.inputs ?? []).map((input) => input.name));
      const templates = [
        ...(provider.customOpts?.headers ?? []),
        ...(provider.customOpts?.queryParams ?? []),
      ];
      expect({ name: provider.name, templates: templates.length > 0 }).toEqual({
        name: provider.name,
        templates: true,
      });
      const used = new Set(templates.flatMap((template) => templateVariables(template.valueTemplate)));
      const declared = declaredVariables(provider);
      const undeclared = [...used].filter((name) => !inputs.has(name) && !declared.has(name));
      expect({ name: provider.name, undeclared }).toEqual({ name: provider.name, undeclared: [] });
    }
  });

  it('list providers without credentials (authType none) with no auth options at all', () => {
    const none = providers.filter((p) => p.authType === 'none' && !sandboxes.includes(p.name));
    expect(none.map((p) => p.name)).toEqual(['hackerNews']);
    for (const provider of none) {
      expect([provider.oauth2Opts, provider.apiKeyOpts, provider.basicOpts, provider.customOpts]).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
    }
  });

  it('give API-key providers apiKeyOpts, with documentation for real ones', () => {
    for (const provider of providers.filter((p) => p.authType === 'apiKey')) {
      expect(provider.apiKeyOpts).toBeDefined();
      const where = provider.apiKeyOpts!.attachmentType;
      expect(provider.apiKeyOpts![where]).toBeDefined();
      if (!sandboxes.includes(provider.name)) expect(provider.apiKeyOpts!.docsURL).toMatch(/^https:\/\//);
    }
  });

  it('declare every URL template variable in metadata (sandboxURL aside)', () => {
    for (const provider of providers) {
      const declared = declaredVariables(provider);
      for (const [where, url] of urlsOf(provider)) {
        const undeclared = templateVariables(url).filter(
          (name) => name !== SANDBOX_URL_VARIABLE && !declared.has(name),
        );
        expect({ provider: provider.name, where, undeclared }).toEqual({
          provider: provider.name,
          where,
          undeclared: [],
        });
      }
      // Variables entered before authorization are the ones the authorization endpoints may use.
      const inputs = new Set((provider.metadata?.input ?? []).map((input) => input.name));
      for (const url of [provider.oauth2Opts?.authURL, provider.oauth2Opts?.tokenURL].filter(
        Boolean,
      ) as string[]) {
        const late = templateVariables(url).filter(
          (name) => name !== SANDBOX_URL_VARIABLE && !inputs.has(name),
        );
        expect({ provider: provider.name, url, late }).toEqual({ provider: provider.name, url, late: [] });
      }
    }
  });

  it('have a defaultModule that is a module, or root', () => {
    for (const provider of providers) {
      if (provider.modules) expect(Object.keys(provider.modules)).toContain(provider.defaultModule);
      else expect(provider.defaultModule).toBe('root');
    }
  });

  it('take their support flags from their connector declarations, declared once', () => {
    for (const provider of providers) {
      const declaration = connectorDeclaration(provider.name);
      const declared = declaration && declaredCapabilities(declaration);
      expect({ name: provider.name, ...provider.support }).toMatchObject({
        name: provider.name,
        proxy: true,
        read: declared?.read ?? false,
        write: declared?.write ?? false,
        delete: declared?.delete ?? false,
        subscribe: declared?.subscribe ?? false,
      });
      expect(hasDeepConnector(provider.name)).toBe(declaration !== undefined);
    }
    expect(connectorDeclaration('hubspot')).toBeDefined();
  });

  it('render every URL template once its variables are given', () => {
    for (const provider of providers) {
      for (const [, url] of urlsOf(provider)) {
        const vars = Object.fromEntries(templateVariables(url).map((name) => [name, `x${name}`]));
        const rendered = renderProviderTemplate(url, vars);
        expect(rendered).not.toMatch(/\{\{|\}\}/);
      }
    }
  });
});

describe('provider facts', () => {
  const present = existsSync(factsFile);
  const facts = present
    ? Object.fromEntries(
        readFileSync(factsFile, 'utf8')
          .trim()
          .split('\n')
          .slice(1)
          .map((line) => line.split('\t'))
          .map(([name, authType, grantType, baseURL, authURL, tokenURL]) => [
            name,
            { authType, grantType, baseURL, authURL, tokenURL },
          ]),
      )
    : {};
  const orUndefined = (value: string | undefined) => (value ? value : undefined);
  const noTrailingSlash = (value: string) => value.replace(/\/$/, '');

  /** tsv providers Ferry cannot serve yet, with the reason. */
  const notInCatalog: Record<string, string> = {};

  (present ? it : it.skip)('hold every provider provider-facts.tsv lists, with its auth type', () => {
    expect(Object.keys(facts)).toHaveLength(238);
    const missing: string[] = [];
    for (const [name, fact] of Object.entries(facts)) {
      if (Object.hasOwn(notInCatalog, name)) {
        expect(isKnownProvider(name)).toBe(false);
        continue;
      }
      const provider = getProvider(name);
      if (!provider) missing.push(name);
      else expect({ name, authType: provider.authType }).toEqual({ name, authType: fact.authType });
    }
    expect(missing).toEqual([]);
    const extra = real.filter((provider) => !facts[provider.name]).map((provider) => provider.name);
    expect(extra.sort()).toEqual(Object.keys(beyondFacts).sort());
    expect(Object.keys(facts).length - Object.keys(notInCatalog).length).toBe(
      real.length - Object.keys(beyondFacts).length,
    );
  });

  (present ? it : it.skip)(
    'match provider-facts.tsv on every row: auth type, grant, base, auth and token URLs',
    () => {
      let checked = 0;
      for (const [name, fact] of Object.entries(facts)) {
        if (Object.hasOwn(notInCatalog, name)) continue;
        const provider = getProvider(name)!;
        const actual = {
          name,
          authType: provider.authType,
          grantType: provider.oauth2Opts?.grantType,
          // The tsv writes two base URLs with a trailing slash; the catalog drops it.
          baseURL: noTrailingSlash(provider.baseURL),
          authURL: provider.oauth2Opts?.authURL,
          tokenURL: provider.oauth2Opts?.tokenURL,
        };
        expect(actual).toEqual({
          name,
          authType: fact.authType,
          grantType: orUndefined(fact.grantType),
          baseURL: noTrailingSlash(fact.baseURL),
          authURL: orUndefined(fact.authURL),
          tokenURL: orUndefined(fact.tokenURL),
        });
        checked++;
      }
      expect(checked).toBe(238 - Object.keys(notInCatalog).length);
    },
  );
});

describe('catalog API', () => {
  it('serves the map the API schema describes, sorted by name', () => {
    const map = listProviders();
    expect(Compile(ProviderMapSchema).Check(map)).toBe(true);
    const names = Object.keys(map);
    expect(names).toEqual(names.slice().sort());
  });

  it('looks providers up by exact name', () => {
    expect(getProvider('hubspot')?.providerOpts).toEqual({ crmApiVersion: 'v3' });
    expect(getProvider('hubspot')?.modules?.crm.support.read).toBe(true);
    expect(getProvider('nope')).toBeUndefined();
    expect(getProvider('toString')).toBeUndefined();
    expect(isKnownProvider('salesforce')).toBe(true);
    expect(isKnownProvider('Salesforce')).toBe(false);
    expect(isKnownProvider('__proto__')).toBe(false);
  });

  it('describes the sandboxes as the spec of Ferry’s bundled CRM says', () => {
    const sandbox = getProvider('sandbox')!;
    expect(sandbox.oauth2Opts).toMatchObject({
      grantType: 'authorizationCode',
      pkce: true,
      clientAuthMethod: 'clientSecretPost',
      authURL: '{{.sandboxURL}}/oauth/authorize',
      tokenURL: '{{.sandboxURL}}/oauth/token',
      defaultScopes: [
        'contacts.read',
        'contacts.write',
        'companies.read',
        'companies.write',
        'deals.read',
        'deals.write',
        'webhooks',
      ],
    });
    const apiKey = getProvider('sandboxApiKey')!;
    expect(apiKey.apiKeyOpts).toMatchObject({ attachmentType: 'header', header: { name: 'X-Api-Key' } });
    for (const provider of [sandbox, apiKey]) {
      expect(provider.baseURL).toBe('{{.sandboxURL}}/api/v1');
      expect(provider.support).toMatchObject({
        read: true,
        write: true,
        delete: true,
        subscribe: true,
        proxy: true,
        search: { operators: { equals: true } },
        bulkWrite: { insert: false, update: false, upsert: false, delete: false },
        subscribeSupport: { create: true, update: true, delete: true },
      });
    }
    expect(renderProviderTemplate(sandbox.baseURL, { sandboxURL: 'http://127.0.0.1:8090' })).toBe(
      'http://127.0.0.1:8090/api/v1',
    );
  });

  it('keeps the catalog frozen', () => {
    const hubspot = getProvider('hubspot')!;
    expect(Object.isFrozen(hubspot)).toBe(true);
    expect(Object.isFrozen(hubspot.oauth2Opts!.defaultScopes)).toBe(true);
  });
});

describe('renderProviderTemplate', () => {
  it('fills every placeholder, spaces allowed', () => {
    expect(
      renderProviderTemplate('https://{{.workspace}}.api.{{ .region }}.dynamics.com/{{.workspace}}', {
        workspace: 'acme',
        region: 'crm4',
      }),
    ).toBe('https://acme.api.crm4.dynamics.com/acme');
    expect(renderProviderTemplate('https://api.example.com', {})).toBe('https://api.example.com');
  });

  it('names every missing or empty variable', () => {
    expect(() =>
      renderProviderTemplate('https://{{.workspace}}.x/{{.region}}/{{.ok}}', { ok: 'y', region: '' }),
    ).toThrow(/"workspace", "region"/);
    let thrown: unknown;
    try {
      renderProviderTemplate('{{.a}}{{.b}}', { toString: 'x' } as Record<string, string>);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProviderTemplateError);
    expect((thrown as ProviderTemplateError).missing).toEqual(['a', 'b']);
    expect(() => renderProviderTemplate('{{.constructor}}', {})).toThrow(/"constructor"/);
  });
});

describe('validateProviderFile', () => {
  const valid = (): Record<string, unknown> =>
    structuredClone(raw.find(({ file }) => file === 'stripe.json')!.value);

  it('accepts a valid file', () => {
    expect(validateProviderFile('stripe.json', valid(), 'stripe').name).toBe('stripe');
  });

  it('names the file and the offending path', () => {
    const bad = { ...valid(), authType: 'magic' };
    expect(() => validateProviderFile('stripe.json', bad, 'stripe')).toThrow(ProviderCatalogError);
    expect(() => validateProviderFile('stripe.json', bad, 'stripe')).toThrow(/stripe\.json.*\n.*\/authType/);
    expect(() => validateProviderFile('stripe.json', { ...valid(), docs: {} }, 'stripe')).toThrow(
      /additional/,
    );
  });

  it('names a missing auth options object', () => {
    const { apiKeyOpts: _apiKeyOpts, ...bad } = valid();
    expect(() => validateProviderFile('stripe.json', bad, 'stripe')).toThrow(
      /\/apiKeyOpts is required when authType is apiKey/,
    );
    const noHeader = valid();
    delete (noHeader.apiKeyOpts as Record<string, unknown>).header;
    expect(() => validateProviderFile('stripe.json', noHeader, 'stripe')).toThrow(
      /\/apiKeyOpts\/header is required/,
    );
  });

  it('names missing jwtOpts of a jwt provider', () => {
    const jwt = structuredClone(
      raw.find(({ file }) => file === 'googleServiceAccount.json')!.value,
    ) as Record<string, unknown>;
    expect(validateProviderFile('googleServiceAccount.json', jwt, 'googleServiceAccount').authType).toBe(
      'jwt',
    );
    delete jwt.jwtOpts;
    expect(() => validateProviderFile('googleServiceAccount.json', jwt, 'googleServiceAccount')).toThrow(
      /\/jwtOpts is required when authType is jwt/,
    );
  });

  it('names the missing options of an alternative auth method, by its index', () => {
    const pipedrive = structuredClone(raw.find(({ file }) => file === 'pipedrive.json')!.value) as Record<
      string,
      unknown
    >;
    expect(validateProviderFile('pipedrive.json', pipedrive, 'pipedrive').alternativeAuth).toHaveLength(1);
    const noOpts = structuredClone(pipedrive);
    delete (noOpts.alternativeAuth as Record<string, unknown>[])[0].apiKeyOpts;
    expect(() => validateProviderFile('pipedrive.json', noOpts, 'pipedrive')).toThrow(
      /\/alternativeAuth\/0\/apiKeyOpts is required when authType is apiKey/,
    );
    const oauthNoAuthURL = structuredClone(pipedrive);
    oauthNoAuthURL.alternativeAuth = [
      {
        authType: 'oauth2',
        displayName: 'Second OAuth',
        oauth2Opts: {
          ...(pipedrive.oauth2Opts as object),
          authURL: undefined,
          grantType: 'clientCredentials',
        },
      },
      { authType: 'jwt', displayName: 'JWT' },
    ];
    expect(() => validateProviderFile('pipedrive.json', oauthNoAuthURL, 'pipedrive')).toThrow(
      /\/alternativeAuth\/1\/jwtOpts is required when authType is jwt/,
    );
    expect(() =>
      validateProviderFile(
        'pipedrive.json',
        { ...pipedrive, alternativeAuth: [{ authType: 'none', displayName: 'Nothing' }] },
        'pipedrive',
      ),
    ).toThrow(/alternativeAuth\/0\/authType/);
  });

  it('refuses two auth methods that take the same kind of credential', () => {
    const pipedrive = structuredClone(raw.find(({ file }) => file === 'pipedrive.json')!.value) as Record<
      string,
      unknown
    >;
    const [token] = pipedrive.alternativeAuth as Record<string, unknown>[];
    const twice = { ...pipedrive, alternativeAuth: [token, { ...token, displayName: 'API token again' }] };
    expect(() => validateProviderFile('pipedrive.json', twice, 'pipedrive')).toThrow(
      /more than one of the provider's auth methods takes apiKey credentials/,
    );
    // An API key sent as Basic is an API key too.
    const asBasic = {
      ...pipedrive,
      alternativeAuth: [
        token,
        { authType: 'basic', displayName: 'Key as Basic', basicOpts: { apiKeyAsBasic: true } },
      ],
    };
    expect(() => validateProviderFile('pipedrive.json', asBasic, 'pipedrive')).toThrow(
      /takes apiKey credentials/,
    );
  });

  it('refuses a Basic username format without its %s', () => {
    const zendesk = structuredClone(
      raw.find(({ file }) => file === 'zendeskSupport.json')!.value,
    ) as unknown as Record<string, { basicOpts: Record<string, unknown> }[]>;
    zendesk.alternativeAuth[0].basicOpts.usernameFormat = '/token';
    expect(() => validateProviderFile('zendeskSupport.json', zendesk, 'zendeskSupport')).toThrow(
      /alternativeAuth\/0\/basicOpts\/usernameFormat/,
    );
  });

  it('rejects a name that differs from the file', () => {
    expect(() => validateProviderFile('stripe2.json', valid(), 'stripe2')).toThrow(/file is named "stripe2"/);
  });
});

/**
 * Every method each deep connector's provider documents for its REST API (sources in
 * SOURCES.md, "Auth methods"), as the credential kinds `connections:generate` takes for it. A kind
 * here that the catalog lost, or one it gained without a source, fails.
 */
const documentedKinds: Record<string, string[]> = {
  activeCampaign: ['apiKey'],
  asana: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'apiKey'],
  atlassian: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  brevo: ['apiKey'],
  calendly: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  capsule: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'apiKey'],
  chargebee: ['apiKey', 'basicAuth'],
  clickup: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'apiKey'],
  close: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'apiKey', 'basicAuth'],
  copper: ['apiKey', 'oauth2AuthorizationCode'],
  dixa: ['apiKey'],
  dynamicsCRM: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  freshdesk: ['apiKey', 'basicAuth'],
  front: ['apiKey', 'oauth2AuthorizationCode'],
  github: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'apiKey'],
  gitlab: ['customAuth'],
  gong: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  google: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  gorgias: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'basicAuth'],
  greenhouse: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  gusto: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  helpScoutMailbox: ['oauth2ClientCredentials', 'oauth2AuthorizationCode'],
  highLevelStandard: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  hubspot: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'apiKey'],
  insightly: ['basicAuth'],
  intercom: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'apiKey'],
  iterable: ['apiKey'],
  keap: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  klaviyo: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  lever: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  linear: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'apiKey'],
  microsoft: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  monday: ['apiKey', 'oauth2AuthorizationCode'],
  notion: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'apiKey'],
  outreach: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  pipedrive: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'apiKey'],
  quickbooks: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  recurly: ['apiKey', 'basicAuth'],
  salesforce: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'jwt'],
  salesloft: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'apiKey'],
  serviceNow: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'basicAuth'],
  shopify: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'apiKey'],
  stripe: ['apiKey'],
  xero: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  zendeskSupport: ['oauth2AuthorizationCode', 'oauth2ClientCredentials', 'basicAuth'],
  zoho: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  ashby: ['apiKey', 'basicAuth'],
  attio: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  braze: ['apiKey'],
  marketo: ['oauth2ClientCredentials'],
  aircall: ['apiKey'],
  apollo: ['apiKey'],
  netsuite: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  zoom: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  freshsales: ['apiKey'],
  sugarCRM: ['oauth2Password'],
  pipeliner: ['basicAuth'],
  freshservice: ['apiKey', 'basicAuth'],
  wrike: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  teamwork: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  smartsheet: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
  typeform: ['oauth2AuthorizationCode', 'oauth2ClientCredentials'],
};

describe('alternative auth methods', () => {
  it('cover every method the deep connectors’ providers document', () => {
    const deep = providers.filter(
      (provider) => hasDeepConnector(provider.name) && !sandboxes.includes(provider.name),
    );
    expect(deep.map((provider) => provider.name).sort()).toEqual(Object.keys(documentedKinds).sort());
    for (const provider of deep) {
      expect({ provider: provider.name, kinds: acceptedCredentialKinds(provider) }).toEqual({
        provider: provider.name,
        kinds: documentedKinds[provider.name],
      });
    }
  });

  it('keep the public shape: the main method stays as the public catalog has it, alternatives beside it', () => {
    for (const provider of providers) {
      for (const alternative of provider.alternativeAuth ?? []) {
        expect(alternative.authType).not.toBe('none');
        expect(alternative.displayName.length).toBeGreaterThan(0);
        expect(alternative.docsURL).toMatch(/^https:\/\//);
      }
    }
    const pipedrive = getProvider('pipedrive')!;
    expect(pipedrive.authType).toBe('oauth2');
    expect(pipedrive.apiKeyOpts).toBeUndefined();
    expect(pipedrive.alternativeAuth).toEqual([
      expect.objectContaining({
        authType: 'apiKey',
        apiKeyOpts: expect.objectContaining({ attachmentType: 'header', header: { name: 'x-api-token' } }),
      }),
    ]);
  });

  it('present each alternative as documented: its own options in place of the main ones', () => {
    const hubspot = getProvider('hubspot')!;
    const token = providerWithAuthMethod(hubspot, authMethodFor(hubspot, 'apiKey')!);
    expect(token).toMatchObject({
      name: 'hubspot',
      authType: 'apiKey',
      baseURL: hubspot.baseURL,
      apiKeyOpts: { header: { name: 'Authorization', valuePrefix: 'Bearer ' } },
    });
    expect(token.oauth2Opts).toBeUndefined();
    const shopify = getProvider('shopify')!;
    // Shopify's OAuth token header is the main method's; the custom-app token has its own.
    expect(providerWithAuthMethod(shopify, authMethodFor(shopify, 'apiKey')!).customOpts).toBeUndefined();
    expect(authMethodFor(shopify, 'oauth2ClientCredentials')?.main).toBe(true);
    const dynamics = getProvider('dynamicsCRM')!;
    // Microsoft's client credentials go to the tenant's endpoint, not the common one.
    expect(authMethodFor(dynamics, 'oauth2ClientCredentials')?.oauth2Opts?.tokenURL).toBe(
      'https://login.microsoftonline.com/{{.tenant}}/oauth2/v2.0/token',
    );
    expect(authMethods(getProvider('zendeskSupport')!)[1].basicOpts?.usernameFormat).toBe('%s/token');
  });
});
