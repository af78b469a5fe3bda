import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import type { Connector, ProviderRecord } from '../../src/providers/connector.js';
import { connectorFor } from '../../src/providers/connectors/index.js';
import { ConnectorInputError, ProviderError } from '../../src/providers/errors.js';
import { ASANA_WORKSPACE, startFakeAsana, type FakeAsana } from './fakes/asana.js';

/**
 * What Asana does that the conformance suite does not cover: tasks are listed only project by
 * project, so a read walks every project of the workspace (across pages of projects) and returns a
 * task that lives in several projects once; custom field values are read and written by gid;
 * deletions come from every project's event stream where the workspace's is refused; the
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

/**
 * A read asking for deletions, as scheduled reads ask: its records and resume cursor. `refuse`
 * answers the first request for an event stream with that status (the workspace's stream, which
 * only Enterprise+ service accounts may read).
 */
async function readWithDeletions(objectName: string, since: Date, resumeFrom?: string, refuse?: number) {
  const records: ProviderRecord[] = [];
  let pageToken: string | undefined;
  for (let pages = 0; pages < 2000; pages++) {
    const page = await connector.readPage({
      objectName,
      since,
      includeDeleted: true,
      ...(pageToken ? { pageToken } : resumeFrom && { resumeFrom }),
    });
    records.push(...page.records);
    if (page.done) return { records, resumeCursor: page.resumeCursor };
    pageToken = page.nextPageToken;
    if (refuse && pageToken && JSON.parse(Buffer.from(pageToken, 'base64url').toString()).k === 'events') {
      fake.failNext(1, refuse);
      refuse = undefined;
    }
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
    // Read as an exclusive bound (the reference does not say): asked from a millisecond earlier.
    expect(tasksAsked.at(-1)?.query.modified_since).toBe(new Date(since.getTime() - 1).toISOString());
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
    expect(read.values).toMatchObject({ '1200000000000101': '1200000000000112', '1200000000000102': 3.5 });
    expect(read.raw['1200000000000101']).toBeUndefined();
    const chosen = (await readAll({ objectName: 'tasks', pageSize: 100, fields: ['1200000000000102'] })).find(
      (record) => record.id === created.recordId,
    )!;
    expect(chosen.values?.['1200000000000102']).toBe(3.5);
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

  it('tells deletions from every project’s event stream when the workspace’s is refused, and from where the last read left it', async () => {
    let clock = Date.now();
    fake.setClock(() => clock);
    try {
      const [task] = fake.seed('tasks', [clock - 60_000]);
      const [project] = fake.seed('projects', [clock - 60_000]);
      const since = new Date(clock - 3_600_000);
      const first = await readWithDeletions('tasks', since, undefined, 403);
      const firstProjects = await readWithDeletions('projects', since, undefined, 403);
      const streams = fake.requests.filter((request) => request.path === '/api/1.0/events');
      expect(streams.map((request) => request.query.resource)).toEqual(
        expect.arrayContaining([...fake.fixtureProjects, project]),
      );
      expect(first.records.filter((record) => record.deleted)).toEqual([]);

      const before = fake.requests.length;
      fake.remove('tasks', task, clock);
      fake.remove('projects', project, clock);
      // Events reach their streams within about a minute.
      clock += 120_000;
      const second = await readWithDeletions('tasks', since, first.resumeCursor);
      const secondProjects = await readWithDeletions('projects', since, firstProjects.resumeCursor);
      const asked = fake.requests.slice(before).map((request) => request.path);
      // The last read walked the projects' streams: this one does too, from their tokens.
      expect(asked).not.toContain(`/api/1.0/workspaces/${ASANA_WORKSPACE}/events`);
      expect(second.records.filter((record) => record.deleted).map((record) => record.id)).toEqual([task]);
      // The project is gone from the listing and its stream answers 404: told deleted, once.
      expect(secondProjects.records.filter((record) => record.deleted)).toMatchObject([
        { id: project, deleted: true },
      ]);
      const third = await readWithDeletions('projects', since, secondProjects.resumeCursor);
      expect(third.records.filter((record) => record.deleted)).toEqual([]);
    } finally {
      fake.setClock(() => Date.now());
    }
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
