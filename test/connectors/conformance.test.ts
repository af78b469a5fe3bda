import { readdirSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { connectorDeclaration, listProviders } from '../../src/providers/catalog/index.js';
import { conformance, type ConformanceSpec } from './kit/conformance.js';

/**
 * Every deep connector's conformance suite: one spec per provider under specs/, found here, so a
 * declaration without a spec fails below rather than going untested.
 */
const specsDir = new URL('./specs/', import.meta.url);
const specs: ConformanceSpec[] = [];
for (const file of readdirSync(specsDir)
  .filter((name) => name.endsWith('.ts'))
  .sort()) {
  specs.push(((await import(new URL(file, specsDir).href)) as { spec: ConformanceSpec }).spec);
}

/** Ferry's own sandbox provider: its server cannot seed records in the past, so sandbox-connector.test.ts proves it. */
const provenElsewhere = new Set(['sandbox', 'sandboxApiKey']);

describe('deep connectors', () => {
  it('every connector declaration has a conformance spec', () => {
    const declared = Object.keys(listProviders()).filter((name) => connectorDeclaration(name));
    const specified = new Set(specs.map((spec) => spec.provider));
    expect(declared.filter((name) => !specified.has(name) && !provenElsewhere.has(name))).toEqual([]);
  });
});

for (const spec of specs) conformance(spec);
