import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { projectRoot } from '../../src/config.js';
import { listProviders } from '../../src/providers/catalog/index.js';
import { supportTable } from '../../src/providers/catalog/support-table.js';

/** The README's provider table is the catalog's, never hand-edited (`npm run readme:providers`). */
describe("the README's deep-connector table", () => {
  const readme = readFileSync(`${projectRoot}/README.md`, 'utf8');
  const block = /<!-- providers:start -->\n([\s\S]*?)\n<!-- providers:end -->/.exec(readme)?.[1];

  it('is what the catalog says now', () => {
    expect(block).toBe(supportTable());
  });

  it('lists every provider GET /v1/providers shows with support.read, and no other', () => {
    const listed = [...(block ?? '').matchAll(/^\| [^|]+ \(`([^`]+)`\) \|/gm)].map((match) => match[1]);
    const reading = Object.values(listProviders())
      .filter((provider) => provider.support.read && !provider.name.startsWith('sandbox'))
      .map((provider) => provider.name);
    expect(listed.sort()).toEqual(reading.sort());
    expect(listed.length).toBeGreaterThanOrEqual(38);
  });
});
