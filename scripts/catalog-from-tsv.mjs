#!/usr/bin/env node
// Adds a catalog file for every provider in provider-facts.tsv that has none yet.
// Existing files are never rewritten: they hold facts checked by hand (see SOURCES.md).
// Usage: node scripts/catalog-from-tsv.mjs [path/to/provider-facts.tsv]
// Defaults the tsv cannot give (API key placement, custom headers, display names) are Ferry's
// guesses, listed as unverified in src/providers/catalog/SOURCES.md; the catalog test checks the tsv facts.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const providersDir = join(repoRoot, 'src/providers/catalog/providers');
const tsv = process.argv[2] ?? join(repoRoot, '../shared/data/provider-facts.tsv');

/** tsv providers left out, with the reason (the catalog test lists them too). */
const skipped = {
  sugarCRM: 'password grant (not implemented) against a self-hosted URL that includes its scheme',
};

/** Placeholders learnt after authorization rather than entered by the user. */
const postAuthentication = new Set(['api_base_url_for_customer', 'cloudId', 'server']);

function displayName(name) {
  const spaced = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2');
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

function siteRoot(baseURL) {
  const host = new URL(baseURL.replace(/\{\{\.[^}]+\}\}/g, 'x')).hostname.split('.');
  return `https://${host.slice(-2).join('.')}`;
}

function variables(...urls) {
  const names = new Set();
  for (const url of urls.filter(Boolean)) for (const m of url.matchAll(/\{\{\.([^}]+)\}\}/g)) names.add(m[1]);
  return [...names];
}

function entry([name, authType, grantType, baseURL, authURL, tokenURL]) {
  const provider = { name, displayName: displayName(name), authType, baseURL, defaultModule: 'root' };
  if (authType === 'oauth2') {
    provider.oauth2Opts = {
      grantType,
      ...(authURL && { authURL }),
      tokenURL,
      explicitScopesRequired: false,
      explicitWorkspaceRequired: variables(authURL, tokenURL).includes('workspace'),
      tokenMetadataFields: {},
      ...(grantType === 'authorizationCodePKCE' && { pkce: true }),
    };
  } else if (authType === 'apiKey') {
    provider.apiKeyOpts = {
      attachmentType: 'header',
      header: { name: 'Authorization', valuePrefix: 'Bearer ' },
      docsURL: siteRoot(baseURL),
    };
  } else if (authType === 'basic') {
    provider.basicOpts = {};
  } else if (authType === 'custom') {
    provider.customOpts = {
      headers: [{ name: 'Authorization', valueTemplate: 'Bearer {{.token}}' }],
      inputs: [{ name: 'token', displayName: 'API token', prompt: `Your ${displayName(name)} API token.` }],
    };
  }
  const vars = variables(baseURL, authURL, tokenURL);
  const input = vars.filter((v) => !postAuthentication.has(v));
  const post = vars.filter((v) => postAuthentication.has(v));
  if (vars.length) {
    provider.metadata = {
      ...(input.length && {
        input: input.map((v) => ({
          name: v,
          displayName: v === 'workspace' ? 'Workspace' : displayName(v),
          prompt: `The ${v === 'workspace' ? 'account or tenant name' : v} in your ${displayName(name)} URL.`,
        })),
      }),
      ...(post.length && { postAuthentication: post.map((v) => ({ name: v })) }),
    };
  }
  provider.providerOpts = {};
  return provider;
}

const rows = readFileSync(tsv, 'utf8')
  .split('\n')
  .slice(1)
  .filter((line) => line.trim())
  .map((line) => line.split('\t'));
let added = 0;
for (const row of rows) {
  const file = join(providersDir, `${row[0]}.json`);
  if (existsSync(file) || Object.hasOwn(skipped, row[0])) continue;
  writeFileSync(file, `${JSON.stringify(entry(row), null, 2)}\n`);
  added++;
}
console.log(
  `${added} provider files added; ${Object.keys(skipped).length} skipped; the rest already present`,
);
