import { readFileSync, readdirSync } from 'node:fs';
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

/**
 * The seconds each provider's suite took in a recorded run (scripts/record-test-durations.js):
 * providers paced by their documented rate limits take minutes, most take seconds.
 */
function recordedSeconds(): Record<string, number> {
  const file = new URL('../../setup/conformance-durations.json', import.meta.url);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * The specs of one shard (0-based). Shards are balanced by recorded duration, longest first into
 * the lightest shard, so no shard holds two slow providers while another idles; a provider
 * without a recording counts as the median one.
 */
export async function specsOfShard(shard: number): Promise<ConformanceSpec[]> {
  // `CONFORMANCE=outreach,brevo npm test -- test/connectors/conformance-0.test.ts` runs just those.
  const only = process.env.CONFORMANCE?.split(',').filter(Boolean);
  if (only?.length)
    return shard === 0 ? (await loadSpecs()).filter((spec) => only.includes(spec.provider)) : [];
  const specs = await loadSpecs();
  const recorded = recordedSeconds();
  const known = Object.values(recorded).sort((a, b) => a - b);
  const median = known.length ? known[Math.floor(known.length / 2)] : 1;
  const seconds = (spec: ConformanceSpec) => recorded[spec.provider] ?? median;
  const load = Array.from({ length: CONFORMANCE_SHARDS }, () => 0);
  const shardOf = new Map<string, number>();
  for (const spec of [...specs].sort(
    (a, b) => seconds(b) - seconds(a) || a.provider.localeCompare(b.provider),
  )) {
    const lightest = load.indexOf(Math.min(...load));
    load[lightest] += seconds(spec);
    shardOf.set(spec.provider, lightest);
  }
  return specs.filter((spec) => shardOf.get(spec.provider) === shard);
}
