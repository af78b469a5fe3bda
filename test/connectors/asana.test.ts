import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import type { Connector, ProviderRecord } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { ConnectorInputError, ProviderError } from '../../src/providers/errors.js';
import { ASANA_WORKSPACE, startFakeAsana, type FakeAsana } from './fakes/asana.js';

/**
 * What Asana does that the conformance suite does not cover: tasks are listed only project by
 * project, so a read walks every project of the workspace (across pages of projects) and returns a
 * task that lives in several projects once; custom field values are read and written by gid; the
 * provider's error messages reach Ferry's errors.
 */

let fake: FakeAsana;
let connector: Connector;

beforeAll(async () => {
  fake = await startFakeAsana();
  process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({ asana: { baseURL: fake.url } });
  resetConfig();
  connector = connectorFor(
    {
      provider: 'asana',
      templateVars: { workspace: ASANA_WORKSPACE },
      auth: async () => ({ type: 'oauth2', accessToken: fake.credential }),
    },
    { retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 } },
  );
});
afterAll(async () => {
  delete process.env.FERRY_PROVIDER_OVERRIDES;
  resetConfig();
  await fake?.stop();
});

async function readAll(input: { objectName: string; pageSize: number; fields?: string[]; since?: Date }) {
  const records: ProviderRecord[] = [];
  let pageToken: string | undefined;
  for (let pages = 0; pages < 500; pages++) {
    const page = await connector.readPage({ ...input, ...(pageToken && { pageToken }) });
    records.push(...page.records);
    if (page.done) return records;
    pageToken = page.nextPageToken;
  }
  throw new Error('the read never ended');
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('Asana', () => {
  it('reads tasks project by project, each task once even when it lives in several projects', async () => {
    const [shared, single] = fake.seed('tasks', [Date.UTC(2025, 0, 1), Date.UTC(2025, 0, 2)]);
    for (const project of fake.fixtureProjects) fake.addToProject(shared, project);
    const before = fake.requests.length;
    const read = (await readAll({ objectName: 'tasks', pageSize: 2 })).map((record) => record.id);
    expect(read.filter((id) => id === shared)).toHaveLength(1);
    expect(read.filter((id) => id === single)).toHaveLength(1);
    const asked = fake.requests.slice(before).filter((request) => request.path === '/api/1.0/tasks');
    expect(new Set(asked.map((request) => request.query.project))).toEqual(new Set(fake.fixtureProjects));
    expect(asked.every((request) => String(request.query.opt_fields).includes('modified_at'))).toBe(true);
  });

  it('walks projects beyond the first page of the project listing', async () => {
    const projects = fake.seed(
      'projects',
      Array.from({ length: 105 }, (_, i) => Date.UTC(2024, 0, 1) + i),
    );
    const last = projects[projects.length - 1];
    const created = await connector.write({
      objectName: 'tasks',
      type: 'create',
      record: { name: 'In the last project', projects: [last] },
    });
    const since = new Date(Date.now() - 60_000);
    const read = await readAll({ objectName: 'tasks', pageSize: 100, since });
    expect(read.map((record) => record.id)).toContain(created.recordId);
    const tasksAsked = fake.requests.filter((request) => request.query.project === last);
    expect(tasksAsked.at(-1)?.query.modified_since).toBe(since.toISOString());
  });

  it('reads and writes custom field values by the field’s gid', async () => {
    const created = await connector.write({
      objectName: 'tasks',
      type: 'create',
      record: { name: 'Estimate me', projects: [fake.fixtureProjects[0]], '1200000000000102': 3.5 },
    });
    await connector.write({
      objectName: 'tasks',
      type: 'update',
      recordId: created.recordId,
      record: { '1200000000000101': '1200000000000112' },
    });
    const read = (await readAll({ objectName: 'tasks', pageSize: 100 })).find(
      (record) => record.id === created.recordId,
    )!;
    expect(read.raw).toMatchObject({ '1200000000000101': '1200000000000112', '1200000000000102': 3.5 });
    const chosen = (await readAll({ objectName: 'tasks', pageSize: 100, fields: ['1200000000000102'] })).find(
      (record) => record.id === created.recordId,
    )!;
    expect(chosen.raw['1200000000000102']).toBe(3.5);
    expect(chosen.raw.notes).toBeUndefined();
  });

  it('passes on Asana’s error message, and refuses a field name before asking', async () => {
    const error = await failure(
      connector.write({ objectName: 'tasks', type: 'create', record: { name: 'x', colour: 'red' } }),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 400, retryable: false, providerMessage: 'colour: Unknown field' });
    const before = fake.requests.length;
    expect(
      await failure(connector.readPage({ objectName: 'projects', pageSize: 5, fields: ['name,notes'] })),
    ).toBeInstanceOf(ConnectorInputError);
    expect(fake.requests.length).toBe(before);
  });

  it('reads one task by gid, and none for a gid it does not have', async () => {
    const [gid] = fake.seed('tasks', [Date.UTC(2025, 5, 1)]);
    expect(await connector.readRecord('tasks', gid)).toMatchObject({
      id: gid,
      raw: { name: expect.any(String) },
    });
    expect(await connector.readRecord('tasks', '1999999999999999')).toBeUndefined();
  });
});
