import { setTimeout as sleep } from 'node:timers/promises';
import type { ConnectorDeclaration } from '../../schemas/connector-declaration.js';

/**
 * Keeps to the limits a provider documents per endpoint (HubSpot's search: five requests a second
 * per token) instead of running into 429s: before a matching request is sent, it waits until fewer
 * than `requests` were sent in the last `perSeconds`. A sliding window, not a bucket, so no burst
 * at a window's edge doubles the rate. Per process: workers of one deployment each keep the limit.
 */

type Rule = NonNullable<ConnectorDeclaration['pacing']>[number];

interface Lane {
  /** When the last `requests` sends of this lane happened, oldest first. */
  sent: number[];
  /** Sends wait their turn one after the other. */
  turn: Promise<void>;
  lastUse: number;
}

const lanes = new Map<string, Lane>();
/** Lanes unused this long are forgotten; no documented window is longer. */
const IDLE_MS = 10 * 60_000;
const MAX_LANES = 10_000;

function forgetIdle(now: number): void {
  if (lanes.size < MAX_LANES) return;
  for (const [key, lane] of lanes) if (now - lane.lastUse > IDLE_MS) lanes.delete(key);
  if (lanes.size >= MAX_LANES) lanes.clear();
}

/**
 * The window a lane keeps to: the documented one and a margin, since the provider counts when
 * requests arrive, and an earlier request that took longer to arrive (a new connection) would
 * otherwise land inside the window of a later one sent right at its edge.
 */
function windowOf(rule: Rule): number {
  const documented = rule.perSeconds * 1000;
  return documented + Math.max(50, documented * 0.05);
}

async function takeTurn(lane: Lane, rule: Rule): Promise<void> {
  const windowMs = windowOf(rule);
  for (;;) {
    const now = Date.now();
    while (lane.sent.length && now - lane.sent[0] >= windowMs) lane.sent.shift();
    if (lane.sent.length < rule.requests) {
      lane.sent.push(now);
      return;
    }
    await sleep(lane.sent[0] + windowMs - now);
  }
}

/**
 * What a connector calls before each attempt of a request: waits for its turn under every rule the
 * request matches. `key` names whose limit it is (the connection).
 */
export function pacer(
  rules: readonly Rule[] | undefined,
  key: string,
): ((request: { method: string; url: URL }) => Promise<void>) | undefined {
  if (!rules?.length) return undefined;
  const compiled = rules.map((rule, index) => ({ rule, index, path: new RegExp(rule.path) }));
  return async ({ method, url }) => {
    for (const { rule, index, path } of compiled) {
      if ((rule.method && rule.method !== method) || !path.test(url.pathname)) continue;
      const now = Date.now();
      forgetIdle(now);
      const laneKey = `${key}#${index}`;
      let lane = lanes.get(laneKey);
      if (!lane) lanes.set(laneKey, (lane = { sent: [], turn: Promise.resolve(), lastUse: now }));
      lane.lastUse = now;
      const turn = lane.turn.then(() => takeTurn(lane, rule));
      lane.turn = turn.catch(() => {});
      await turn;
    }
  };
}
