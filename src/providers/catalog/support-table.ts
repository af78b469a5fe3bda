import { connectorDeclaration, listProviders } from './index.js';

const mark = (yes: boolean) => (yes ? 'yes' : '');

/**
 * The README's table of deep connectors, made from the catalog so it cannot drift from what
 * `GET /v1/providers` says: each provider with `support.read`, what else it supports, and the
 * objects its declaration names (`npm run readme:providers` writes it).
 */
export function supportTable(): string {
  const rows = Object.values(listProviders())
    .filter((provider) => provider.support.read && !provider.name.startsWith('sandbox'))
    .map((provider) => {
      const objects = Object.keys(connectorDeclaration(provider.name)?.objects ?? {})
        .filter((name) => name !== '*')
        .map((name) => `\`${name}\``)
        .join(', ');
      const { support } = provider;
      return `| ${provider.displayName} (\`${provider.name}\`) | ${mark(support.read)} | ${mark(support.write)} | ${mark(support.subscribe)} | ${mark(support.search.operators.equals)} | ${objects} |`;
    });
  return [
    `${rows.length} providers have a deep connector (the other catalog providers are proxied with the customer's credentials).`,
    '',
    '| Provider | Read | Write | Subscribe | Search | Objects |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
