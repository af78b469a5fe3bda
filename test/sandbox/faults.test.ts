import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { startSandbox, type Sandbox, type SandboxStats } from '../../src/sandbox/index.js';
import { api, request } from './helpers.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 100, companies: 10, deals: 10 });
});
afterAll(() => sandbox.close());
afterEach(() => sandbox.reset({ data: true }));

const control = (path: string, json: unknown = {}) => request(sandbox, `/_control${path}`, { json });

describe('rate limiting', () => {
  it('answers 429 with Retry-After once the window is used up', async () => {
    const set = await control('/faults', { rateLimit: { requests: 3, perSeconds: 60 } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ rateLimit: { requests: 3, perSeconds: 60 } });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await api(sandbox, '/contacts?limit=1')).status);
    expect(statuses).toEqual([200, 200, 200]);
    const limited = await api(sandbox, '/contacts?limit=1');
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');

    const stats = (await request<SandboxStats>(sandbox, '/_control/stats')).body;
    expect(stats).toMatchObject({ rateLimited: 1, apiRequests: 4 });

    sandbox.faults.set({ rateLimit: null });
    expect((await api(sandbox, '/contacts?limit=1')).status).toBe(200);
  });

  it('opens a new window after perSeconds', async () => {
    sandbox.faults.set({ rateLimit: { requests: 1, perSeconds: 0.2 } });
    expect((await api(sandbox, '/contacts?limit=1')).status).toBe(200);
    expect((await api(sandbox, '/contacts?limit=1')).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect((await api(sandbox, '/contacts?limit=1')).status).toBe(200);
  });
});

describe('injected errors and latency', () => {
  async function pattern(count: number): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) statuses.push((await api(sandbox, '/contacts?limit=1')).status);
    return statuses;
  }

  it('fails a seeded, repeatable share of API requests', async () => {
    await control('/faults', { errorRate: 0.5 });
    const first = await pattern(40);
    expect(first.filter((s) => s === 500).length).toBeGreaterThan(5);
    expect(first.filter((s) => s === 200).length).toBeGreaterThan(5);
    await control('/faults', { errorRate: 0.5 }); // setting the rate restarts the sequence
    expect(await pattern(40)).toEqual(first);

    sandbox.faults.set({ errorRate: 1 });
    const failed = await api(sandbox, '/contacts');
    expect(failed.status).toBe(500);
    expect(failed.body.error).toBe('internal_error');
    expect(sandbox.faults.stats.injectedErrors).toBeGreaterThan(5);
    // OAuth and control endpoints are unaffected.
    expect((await request(sandbox, '/.well-known/oauth-authorization-server')).status).toBe(200);
  });

  it('adds latency', async () => {
    sandbox.faults.set({ latencyMs: 150 });
    const started = Date.now();
    expect((await api(sandbox, '/contacts?limit=1')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });
});

describe('control endpoints', () => {
  it('validates fault settings', async () => {
    for (const json of [
      { errorRate: 2 },
      { latencyMs: -1 },
      { rateLimit: { requests: 0, perSeconds: 1 } },
      { autoApprove: 'yes' },
      { typo: true },
    ]) {
      const response = await control('/faults', json);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('validation_error');
    }
    expect(() => sandbox.faults.set({ errorRate: -1 })).toThrow();
    expect(sandbox.faults.settings.errorRate).toBe(0);
  });

  it('resets faults, counters and (on request) data', async () => {
    await control('/faults', { latencyMs: 5, autoApprove: true, failTokenEndpoint: true });
    await api(sandbox, '/contacts', { method: 'POST', json: { email: 'reset@test.example' } });
    expect((await api(sandbox, '/contacts/count')).body.count).toBe(101);
    expect((await request(sandbox, '/_control/faults')).body).toMatchObject({
      failTokenEndpoint: true,
      autoApprove: true,
    });

    const reset = await control('/reset');
    expect(reset.body).toMatchObject({
      errorRate: 0,
      latencyMs: 0,
      rateLimit: null,
      autoApprove: false,
      failTokenEndpoint: false,
    });
    expect((await request<SandboxStats>(sandbox, '/_control/stats')).body.requestsServed).toBe(0);
    expect((await api(sandbox, '/contacts/count')).body.count).toBe(101);

    await control('/reset', { data: true });
    expect((await api(sandbox, '/contacts/count')).body.count).toBe(100);
  });
});
