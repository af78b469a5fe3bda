import { readdirSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { connectorDeclaration, listProviders } from '../../src/providers/catalog/index.js';
import { CONFORMANCE_SHARDS, loadSpecs } from './kit/specs.js';

/**
 * Every deep connector's conformance suite: one spec per provider under specs/, run by the
 * conformance-<n>.test.ts shards (so Jest's workers share them). A declaration without a spec
 * fails here rather than going untested.
 */
const specs = await loadSpecs();

/** Ferry's own sandbox provider: its server cannot seed records in the past, so sandbox-connector.test.ts proves it. */
const provenElsewhere = new Set(['sandbox', 'sandboxApiKey']);

describe('deep connectors', () => {
  it('every connector declaration has a conformance spec', () => {
    const declared = Object.keys(listProviders()).filter((name) => connectorDeclaration(name));
    const specified = new Set(specs.map((spec) => spec.provider));
    expect(declared.filter((name) => !specified.has(name) && !provenElsewhere.has(name))).toEqual([]);
  });

  it('every shard file exists, so every spec runs', () => {
    const files = readdirSync(new URL('./', import.meta.url)).filter((name) =>
      /^conformance-\d+\.test\.ts$/.test(name),
    );
    expect(files.sort()).toEqual(
      Array.from({ length: CONFORMANCE_SHARDS }, (_, shard) => `conformance-${shard}.test.ts`).sort(),
    );
  });
});
