import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../src/config.js';
import { CallLimiter } from '../../src/mcp/rate-limit.js';

/** The MCP listener's settings as read from the environment, and the per-session call budget. */

const base = { FERRY_ENV: 'test', FERRY_ENCRYPTION_KEY: Buffer.alloc(32).toString('base64') };

describe('FERRY_MCP_* settings', () => {
  it('listen on 8085, allow 60 calls a minute and proxy GET only, unless told', () => {
    const config = loadConfig({ ...base, FERRY_BUILDER_TOKEN_SECRET: base.FERRY_ENCRYPTION_KEY });
    expect(config.ports.mcp).toBe(8085);
    expect(config.mcp).toEqual({
      callsPerMinute: 60,
      sessionIdleMs: 1_800_000,
      maxSessions: 10_000,
      proxyMethods: ['GET'],
    });
  });

  it('take the builder’s proxy methods, in any case, and refuse one that is not HTTP', () => {
    const env = { ...base, FERRY_BUILDER_TOKEN_SECRET: base.FERRY_ENCRYPTION_KEY };
    expect(loadConfig({ ...env, FERRY_MCP_PROXY_METHODS: 'get, post' }).mcp.proxyMethods).toEqual([
      'GET',
      'POST',
    ]);
    expect(() => loadConfig({ ...env, FERRY_MCP_PROXY_METHODS: 'GET,CONNECT' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...env, FERRY_MCP_PROXY_METHODS: 'GET,CONNECT' })).toThrow(/CONNECT/);
  });
});

describe('a session’s call budget', () => {
  it('allows the limit at once, then one call per share of the minute', () => {
    const limiter = new CallLimiter(3, 0);
    expect([limiter.take(0), limiter.take(0), limiter.take(0)]).toEqual(Array(3).fill({ allowed: true }));
    expect(limiter.take(0)).toEqual({ allowed: false, retryAfterSeconds: 20 });
    expect(limiter.take(10_000)).toEqual({ allowed: false, retryAfterSeconds: 10 });
    expect(limiter.take(20_000)).toEqual({ allowed: true });
    expect(limiter.take(20_000).allowed).toBe(false);
  });
});
