import { readdirSync } from 'node:fs';
import type { ConformanceSpec } from './conformance.js';

/** Every deep connector's conformance spec (test/connectors/specs/), by provider name. */
export async function loadSpecs(): Promise<ConformanceSpec[]> {
  const specsDir = new URL('../specs/', import.meta.url);
  const specs: ConformanceSpec[] = [];
  for (const file of readdirSync(specsDir)
    .filter((name) => name.endsWith('.ts'))
    .sort()) {
    specs.push(((await import(new URL(file, specsDir).href)) as { spec: ConformanceSpec }).spec);
  }
  return specs;
}

/** The conformance files the suite is split into, so Jest's workers share them. */
export const CONFORMANCE_SHARDS = 4;

/** The specs of one shard (0-based): every CONFORMANCE_SHARDS-th, so each holds a mix. */
export async function specsOfShard(shard: number): Promise<ConformanceSpec[]> {
  return (await loadSpecs()).filter((_, index) => index % CONFORMANCE_SHARDS === shard);
}
