import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { authenticateApiKey } from '../../src/api/auth.js';
import { closeOrm, em as newEntityManager } from '../../src/db/orm.js';

/** The admin commands, run as an operator would, against the test database. */
const ferry = (...args: string[]) =>
  spawnSync(process.execPath, ['bin/ferry.js', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, FERRY_LOG_LEVEL: 'error' },
  });

afterAll(async () => closeOrm());

describe('ferry api-keys create', () => {
  it('creates a full key by default and a frontend-only key with --frontend', async () => {
    const name = `cli-${randomUUID().slice(0, 8)}`;
    const project = ferry('projects', 'create', '--name', name);
    expect({ status: project.status, stderr: project.stderr }).toEqual({ status: 0, stderr: '' });

    const full = ferry('api-keys', 'create', '--project', name, '--label', 'backend');
    const frontend = ferry('api-keys', 'create', '--project', name, '--label', 'browser', '--frontend');
    for (const run of [full, frontend]) expect(run.status).toBe(0);
    const fullKey = JSON.parse(full.stdout);
    const frontendKey = JSON.parse(frontend.stdout);
    expect(fullKey).toMatchObject({ label: 'backend', scopes: [] });
    expect(frontendKey).toMatchObject({ label: 'browser', scopes: ['frontend'] });

    const em = await newEntityManager();
    expect(await authenticateApiKey(fullKey.key, em)).not.toHaveProperty('frontendOnly');
    expect(await authenticateApiKey(frontendKey.key, em)).toMatchObject({ frontendOnly: true });
  }, 120_000);

  it('names an unknown option and exits non-zero', () => {
    const run = ferry('api-keys', 'create', '--project', 'x', '--label', 'y', '--scope', 'admin');
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/scope/);
  });
});
