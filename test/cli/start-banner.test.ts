import { describe, expect, it } from '@jest/globals';
import { startBanner, type StartedStack } from '../../src/cli/start-banner.js';

/** The banner `ferry start` prints: it says so when a development-only setting is on. */

const stack: StartedStack = {
  seconds: '4.2',
  urls: {
    api: 'http://localhost:8080/v1',
    read: 'http://localhost:8081/v1',
    write: 'http://localhost:8082/v1',
    search: 'http://localhost:8084/v1',
    proxy: 'http://localhost:8083',
    mcp: 'http://localhost:8085/v1/mcp',
  },
  temporalAddress: '127.0.0.1:7233',
  sandboxUrl: 'http://127.0.0.1:8090',
  databaseUrl: 'postgres://postgres:secret@127.0.0.1:5432/ferry',
  project: { id: 'p-id', name: 'development', apiKey: 'ferry_sk_dev' },
  allowPrivateDestinations: true,
};

describe('the ferry start banner', () => {
  it('says private-network destinations are allowed, and not to carry it into production', () => {
    const banner = startBanner(stack);
    expect(banner).toMatch(
      /warning\s+private-network destinations are ALLOWED \(FERRY_ALLOW_PRIVATE_DESTINATIONS=true/,
    );
    expect(banner).toMatch(/Never carry this into production/);
    // Printed before the closing lines, where the eye lands after start.
    expect(banner.indexOf('private-network')).toBeLessThan(banner.indexOf('Ctrl-C stops everything'));
  });

  it('says nothing of them when FERRY_ALLOW_PRIVATE_DESTINATIONS is off', () => {
    expect(startBanner({ ...stack, allowPrivateDestinations: false })).not.toMatch(/private-network/);
  });

  it('shows every listener and hides the database password', () => {
    const banner = startBanner(stack);
    for (const url of Object.values(stack.urls)) expect(banner).toContain(url);
    expect(banner).toContain('postgres://postgres:***@127.0.0.1:5432/ferry');
    expect(banner).toContain('metrics    off (FERRY_METRICS_PORT=0)');
  });
});
