import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { resetConfig } from '../../src/config.js';
import { providerDispatcher } from '../../src/providers/http.js';

describe('provider traffic', () => {
  const saved = process.env.FERRY_ALLOW_PRIVATE_DESTINATIONS;
  beforeAll(() => {
    process.env.FERRY_ALLOW_PRIVATE_DESTINATIONS = 'false';
    resetConfig();
  });
  afterAll(() => {
    process.env.FERRY_ALLOW_PRIVATE_DESTINATIONS = saved;
    resetConfig();
  });

  it('never reaches a private address, even when a URL template points there', async () => {
    for (const url of [
      'http://10.0.0.5/token',
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00::1]/x',
    ]) {
      await expect(request(url, { dispatcher: providerDispatcher(), method: 'POST' })).rejects.toThrow(
        /private|link-local|address|not public/i,
      );
    }
  });
});
