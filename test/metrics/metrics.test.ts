import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../src/config.js';
import { withRepairMark, repairUnfinishedChanges } from '../../src/domain/marked-changes.js';
import { startMetricsServer, type MetricsServer } from '../../src/metrics.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { startStackWithSandbox } from '../providers/api-helpers.js';
import { createReadFixture, enableContactWrites, runRead, type ReadFixture } from '../reads/fixtures.js';
import type { TestStack } from '../support/stack.js';

/**
 * The metrics listener on the real stack: requests are timed by route template, and reads, writes,
 * records and delivery attempts are counted where they finish (the worker runs in this process, so
 * one registry holds both).
 */

let stack: TestStack;
let sandbox: Sandbox;
let metrics: MetricsServer;

beforeAll(async () => {
  ({ stack, sandbox } = await startStackWithSandbox({ worker: true }));
  metrics = (await startMetricsServer(0, '127.0.0.1'))!;
});
afterAll(async () => {
  await metrics?.close();
  await stack.close();
  await sandbox.close();
});

async function scrape(): Promise<string> {
  const response = await fetch(metrics.url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of one sample, its labels given in any order; 0 when the series does not exist yet. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[2] ?? '').split(',');
    if (wanted.every((pair) => present.includes(pair))) return Number(match[3]);
  }
  return 0;
}

describe('request latency', () => {
  it('labels requests with the route template, never ids or query strings', async () => {
    const missing = randomUUID();
    expect((await stack.api('GET', `/projects/${stack.project.id}/integrations?pageSize=1`)).status).toBe(
      200,
    );
    expect((await stack.api('GET', `/projects/${stack.project.id}/destinations/${missing}`)).status).toBe(
      404,
    );
    expect((await stack.api('GET', `/no-such-route/${missing}`)).status).toBe(404);
    expect(
      (await stack.api('GET', `/projects/${stack.project.id}/integrations`, { apiKey: 'bad' })).status,
    ).toBe(401);

    const text = await scrape();
    const series = text.split('\n').filter((line) => line.startsWith('ferry_http_request_duration_seconds'));
    expect(series.length).toBeGreaterThan(0);
    for (const line of series) {
      expect(line).not.toContain(stack.project.id);
      expect(line).not.toContain(missing);
      expect(line).not.toContain('?');
    }
    const count = (route: string, status: string) =>
      sample(text, 'ferry_http_request_duration_seconds_count', {
        host: 'api',
        method: 'GET',
        route,
        status,
      });
    expect(count('/v1/projects/:projectIdOrName/integrations', '200')).toBeGreaterThanOrEqual(1);
    expect(count('/v1/projects/:projectIdOrName/integrations', '401')).toBeGreaterThanOrEqual(1);
    expect(
      count('/v1/projects/:projectIdOrName/destinations/:destinationNameOrId', '404'),
    ).toBeGreaterThanOrEqual(1);
    expect(count('unmatched', '404')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^# HELP ferry_http_request_duration_seconds \S/m);
    expect(text).toMatch(/^ferry_http_request_duration_seconds_bucket\{.*le="\+Inf".*\} \d+$/m);
  });

  it('times the read host under its own host label', async () => {
    await stack.read('GET', '/health');
    const text = await scrape();
    expect(
      sample(text, 'ferry_http_request_duration_seconds_count', {
        host: 'read',
        route: '/v1/health',
        status: '200',
      }),
    ).toBeGreaterThanOrEqual(1);
  });
});

describe('reads, records, deliveries and writes', () => {
  let fixture: ReadFixture;

  beforeAll(async () => {
    fixture = await createReadFixture(stack);
  });
  afterAll(async () => {
    await fixture?.receiver.stop();
  });

  it('counts a finished read, the records it delivered, its delivery attempts and how late it began', async () => {
    const before = await scrape();
    const plannedAt = new Date(Date.now() - 60_000).toISOString();
    const { result } = await runRead(stack, fixture, { readType: 'backfill', plannedAt });
    expect(result.status).toBe('success');
    expect(result.recordsProcessed).toBeGreaterThan(0);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      sample(after, name, labels) - sample(before, name, labels);
    expect(delta('ferry_reads_total', { read_type: 'backfill', outcome: 'success' })).toBe(1);
    expect(delta('ferry_read_records_total', { delivery_mode: 'auto' })).toBe(result.recordsProcessed);
    expect(
      delta('ferry_delivery_attempts_total', { kind: 'record', outcome: 'delivered' }),
    ).toBeGreaterThanOrEqual(1);
    expect(delta('ferry_schedule_lateness_seconds_count', { read_type: 'backfill' })).toBe(1);
    // Planned a minute ago: it cannot have begun less than a minute late.
    expect(delta('ferry_schedule_lateness_seconds_bucket', { read_type: 'backfill', le: '30' })).toBe(0);
  });

  it('counts a failed read as a failure, and a triggered read observes no lateness', async () => {
    const failing = await createReadFixture(stack, { credentials: { apiKey: 'not-the-sandbox-key' } });
    try {
      const before = await scrape();
      const { result } = await runRead(stack, failing, { readType: 'triggered' });
      expect(result.status).toBe('failure');
      const after = await scrape();
      const labels = { read_type: 'triggered', outcome: 'failure' };
      expect(sample(after, 'ferry_reads_total', labels) - sample(before, 'ferry_reads_total', labels)).toBe(
        1,
      );
      const lateness = { read_type: 'triggered' };
      expect(sample(after, 'ferry_schedule_lateness_seconds_count', lateness)).toBe(0);
    } finally {
      await failing.receiver.stop();
    }
  });

  it('counts synchronous writes by type and outcome', async () => {
    const integration = await enableContactWrites(stack, fixture);
    const path = `/projects/${stack.project.id}/integrations/${integration.name}/objects/contacts`;
    const before = await scrape();
    const created = await stack.write('POST', path, {
      body: { groupRef: fixture.groupRef, type: 'create', record: { email: 'metrics@example.com' } },
    });
    expect(created.status).toBe(200);
    const refused = await stack.write('POST', path, {
      body: { groupRef: fixture.groupRef, type: 'create', record: { email: 'not-an-email' } },
    });
    expect(refused.status).toBe(422);
    const after = await scrape();
    const delta = (labels: Record<string, string>) =>
      sample(after, 'ferry_writes_total', labels) - sample(before, 'ferry_writes_total', labels);
    expect(delta({ write_type: 'create', outcome: 'success' })).toBe(1);
    expect(delta({ write_type: 'create', outcome: 'failure' })).toBe(1);
    expect(
      sample(after, 'ferry_http_request_duration_seconds_count', {
        host: 'write',
        method: 'POST',
        route: '/v1/projects/:projectIdOrName/integrations/:integrationId/objects/:objectName',
        status: '422',
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('reports the outbox lag as a gauge measured at scrape time', async () => {
    const text = await scrape();
    expect(text).toMatch(/^# TYPE ferry_outbox_lag_seconds gauge$/m);
    expect(sample(text, 'ferry_outbox_lag_seconds')).toBeGreaterThanOrEqual(0);
  });
});

describe('repairs', () => {
  it('counts a change its process left unfinished once the repair loop takes it up', async () => {
    // A mark left behind (its change failed after Temporal was told) for an installation gone since.
    const base = { projectId: stack.project.id, installationId: randomUUID(), reason: 'test' };
    await expect(
      withRepairMark(base, async () => {
        throw new Error('the commit failed after the workflow was told');
      }),
    ).rejects.toThrow('commit failed');
    const before = await scrape();
    expect(await repairUnfinishedChanges({ projectId: stack.project.id })).toMatchObject({
      examined: 1,
      failed: 0,
    });
    const after = await scrape();
    const labels = { outcome: 'repaired' };
    expect(
      sample(after, 'ferry_repair_marks_total', labels) - sample(before, 'ferry_repair_marks_total', labels),
    ).toBe(1);
    // Nothing left: a second pass counts nothing.
    await repairUnfinishedChanges({ projectId: stack.project.id });
    expect(sample(await scrape(), 'ferry_repair_marks_total', labels)).toBe(
      sample(after, 'ferry_repair_marks_total', labels),
    );
  });
});

describe('the metrics listener', () => {
  it('serves only GET /metrics', async () => {
    const other = await fetch(metrics.url.replace(/\/metrics$/, '/'));
    expect(other.status).toBe(404);
    await other.text();
    const post = await fetch(metrics.url, { method: 'POST' });
    expect(post.status).toBe(404);
    await post.text();
  });

  it('is not on the public api listener', async () => {
    const origin = new URL(stack.urls.api).origin;
    const response = await fetch(`${origin}/metrics`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/problem\+json/);
    expect(await response.text()).not.toContain('ferry_');
  });

  it('is turned off by 0 or off, and refuses a bad port', async () => {
    const load = (vars: Record<string, string>) => loadConfig({ ...process.env, ...vars }).metricsPorts;
    expect(load({ FERRY_METRICS_PORT: '', FERRY_WORKER_METRICS_PORT: '' })).toEqual({
      server: 9464,
      worker: 9465,
    });
    expect(load({ FERRY_METRICS_PORT: '0', FERRY_WORKER_METRICS_PORT: 'off' })).toEqual({
      server: null,
      worker: null,
    });
    expect(() => load({ FERRY_METRICS_PORT: 'nine' })).toThrow(ConfigError);
    expect(() => load({ FERRY_WORKER_METRICS_PORT: '70000' })).toThrow(/FERRY_WORKER_METRICS_PORT/);
    expect(await startMetricsServer(null, '127.0.0.1')).toBeUndefined();
  });
});
