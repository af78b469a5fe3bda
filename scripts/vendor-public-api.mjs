#!/usr/bin/env node
// Copies the public service's published OpenAPI documents (github.com/amp-labs/openapi, MIT) into
// test/fixtures/public-api/, where test/api/public-documents.test.ts checks Ferry's answers and
// messages against them. Descriptions and examples are dropped (they are not part of any shape);
// everything else is kept as published.
//   node scripts/vendor-public-api.mjs <a clone of amp-labs/openapi, or its bare git directory>
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const source = process.argv[2];
if (!source) {
  process.stderr.write('usage: node scripts/vendor-public-api.mjs <amp-labs/openapi clone or git dir>\n');
  process.exit(2);
}
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'test', 'fixtures', 'public-api');

const git = (...args) => execFileSync('git', ['-C', source, ...args], { encoding: 'utf8', maxBuffer: 64e6 });
const commit = git('rev-parse', 'HEAD').trim();
const committed = git('log', '-1', '--format=%cI').trim();

/** Ferry's name for each document → its path in the repository (the api document with its $refs kept). */
const documents = {
  api: 'api/generated/api.bundled.json',
  read: 'api/generated/read.json',
  write: 'api/generated/write.json',
  search: 'api/generated/search.json',
  webhook: 'webhook/generated/webhook.json',
  notifications: 'notifications/generated/notifications.json',
  problem: 'problem/generated/problem.json',
};

const prose = new Set(['description', 'example', 'examples', 'summary', 'externalDocs', 'title']);

/** Drops prose and vendor extensions; keys under `properties` are field names and always stay. */
function shapesOnly(value, underProperties = false) {
  if (Array.isArray(value)) return value.map((item) => shapesOnly(item));
  if (!value || typeof value !== 'object') return value;
  const kept = {};
  for (const [key, inner] of Object.entries(value)) {
    if (!underProperties && (prose.has(key) || key.startsWith('x-'))) continue;
    kept[key] = shapesOnly(inner, !underProperties && key === 'properties');
  }
  return kept;
}

mkdirSync(target, { recursive: true });
for (const [name, path] of Object.entries(documents)) {
  const document = shapesOnly(JSON.parse(git('show', `${commit}:${path}`)));
  writeFileSync(join(target, `${name}.json`), `${JSON.stringify(document, null, 1)}\n`);
}
const license = git('show', `${commit}:LICENSE`);
writeFileSync(
  join(target, 'SOURCE.md'),
  `# The public service's OpenAPI documents

Copied by \`scripts/vendor-public-api.mjs\` from <https://github.com/amp-labs/openapi>, commit
\`${commit}\` (${committed}), without descriptions and examples:

${Object.entries(documents)
  .map(([name, path]) => `- \`${name}.json\`: \`${path}\``)
  .join('\n')}

\`test/api/public-documents.test.ts\` checks Ferry's answers and messages against them. To move to a
newer version, run the script again on a newer clone and see what that test says.

Their license:

\`\`\`
${license.trim()}
\`\`\`
`,
);
process.stdout.write(`public-api: ${Object.keys(documents).length} documents from ${commit}\n`);
