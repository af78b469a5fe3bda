import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { config } from '../../src/config.js';
import { schemaIssues } from '../../src/core/validation.js';
import { em as newEntityManager } from '../../src/db/orm.js';
import { ReadRun } from '../../src/domain/reads/read-run.js';
import { runRetentionTask } from '../../src/domain/retention.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { RecordEntrySchema } from '../../src/schemas/messages.js';
import type { ReadObjectInput } from '../../src/temporal/contracts/read.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { createReadFixture, runRead, type ReadFixture } from './fixtures.js';

/**
 * Full reads with change detection, through the whole pipeline: the sandbox's `people` are its
 * contacts listed as a provider that can neither filter by time nor say when a record changed
 * (`read.fullRead`). A backfill delivers everything; a scheduled read delivers exactly what was
 * created or changed, and records no longer listed once, as inferred deletions; a read that fails
 * part-way infers nothing.
 */

const RECORDS = 5000;
let sandbox: Sandbox;
let stack: TestStack;
let fixture: ReadFixture;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: RECORDS, companies: 1, deals: 1 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  fixture = await createReadFixture(stack, {
    objectName: 'people',
    declared: { backfill: { defaultPeriod: { fullHistory: true } } },
  });
});

afterAll(async () => {
  await fixture?.receiver.stop();
  await stack?.close();
  await sandbox?.close();
});

async function sandboxCall(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${sandbox.url}/api/v1${path}`, {
    method,
    headers: { 'x-api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status}`);
  return response.status === 204 ? undefined : response.json();
}

/** The entries of every message of one operation. */
function entriesOf(operationId: string): any[] {
  return fixture.receiver
    .accepted()
    .filter((request) => request.body?.operationId === operationId)
    .flatMap((request) => request.body.result);
}

const read = (readType: ReadObjectInput['readType']) =>
  runRead(stack, fixture, { readType, objectName: 'people' });

async function fingerprinted(ids?: string[], installationId = fixture.installationId): Promise<number> {
  const rows = await (
    await newEntityManager()
  ).execute<{ count: string }[]>(
    `select count(*) from read_fingerprints where installation_id = ? and object_name = 'people'
       ${ids ? 'and record_id = any(?::text[])' : ''}`,
    [installationId, ...(ids ? [`{${ids.join(',')}}`] : [])],
  );
  return Number(rows[0].count);
}

const sorted = (ids: string[]) => [...ids].sort();
let ids: string[];

describe('a full-read object', () => {
  it('is backfilled whole, each record fingerprinted', async () => {
    const backfill = await read('backfill');
    expect(backfill.result).toMatchObject({ status: 'success', recordsProcessed: RECORDS });
    ids = entriesOf(backfill.operationId).map((entry) => entry.raw.id);
    expect(new Set(ids).size).toBe(RECORDS);
    expect(await fingerprinted()).toBe(RECORDS);
  });

  it('delivers nothing on a scheduled read when nothing changed, inline as schedules run it', async () => {
    const operationId = randomUUID();
    const outcome = await ReadRun.inline(
      {
        operationId,
        installationId: fixture.installationId,
        projectId: fixture.projectId,
        objectName: 'people',
        readType: 'scheduled',
        maxPages: 20,
      },
      config(),
    );
    expect(outcome).toMatchObject({ handover: false, status: 'success', recordsProcessed: 0 });
    expect(entriesOf(operationId)).toEqual([]);
  });

  it('delivers exactly the records created and updated since, on a scheduled read', async () => {
    const updated = ids.filter((_, index) => index % 167 === 5).slice(0, 30);
    for (const id of updated) await sandboxCall('PATCH', `/contacts/${id}`, { lastName: `Changed ${id}` });
    const created: string[] = [];
    for (let n = 0; n < 20; n++) {
      const contact = await sandboxCall('POST', '/contacts', { email: `new${n}@full-read.example` });
      created.push(contact.id);
    }
    const scheduled = await read('scheduled');
    expect(scheduled.result).toMatchObject({ status: 'success', recordsProcessed: 50 });
    const entries = entriesOf(scheduled.operationId);
    expect(sorted(entries.map((entry) => entry.raw.id))).toEqual(sorted([...updated, ...created]));
    for (const entry of entries.filter((entry) => updated.includes(entry.raw.id)))
      expect(entry.mappedFields.surname).toBe(`Changed ${entry.raw.id}`);
    expect(entries.some((entry) => entry.deleted)).toBe(false);
    expect(await fingerprinted()).toBe(RECORDS + 20);
  });

  it('delivers records no longer listed once, as deletions marked inferred', async () => {
    const deleted = ids.slice(100, 110);
    for (const id of deleted) await sandboxCall('DELETE', `/contacts/${id}`);
    const scheduled = await read('scheduled');
    expect(scheduled.result).toMatchObject({ status: 'success', recordsProcessed: 10 });
    const entries = entriesOf(scheduled.operationId);
    expect(sorted(entries.map((entry) => entry.id))).toEqual(sorted(deleted));
    for (const entry of entries) {
      expect(entry).toEqual({
        id: expect.any(String),
        deleted: true,
        inferred: true,
        fields: {},
        mappedFields: {},
        raw: {},
      });
      expect(schemaIssues(RecordEntrySchema, entry, 'body', 'entry')).toEqual([]);
    }
    expect(await fingerprinted(deleted)).toBe(0);

    const again = await read('scheduled');
    expect(again.result).toMatchObject({ status: 'success', recordsProcessed: 0 });
    expect(entriesOf(again.operationId)).toEqual([]);
  });

  it('infers nothing from a walk that fails part-way, and everything from the next whole one', async () => {
    // Removed from the listing's first pages, so the part walked misses them too.
    const deleted = [ids[7], ids[1500], ids[4990]];
    for (const id of deleted) await sandboxCall('DELETE', `/contacts/${id}`);
    const input: ReadObjectInput = {
      operationId: randomUUID(),
      installationId: fixture.installationId,
      projectId: fixture.projectId,
      objectName: 'people',
      readType: 'scheduled',
    };
    await ReadRun.begin(input, 'child', config());
    const pages = await ReadRun.page(input.operationId, config(), { maxPages: 2 });
    expect(pages).toMatchObject({ outcome: 'next', pageIndex: 2 });
    await ReadRun.finish({ ...input, status: 'failure', error: 'the provider failed on page 3' });
    expect(entriesOf(input.operationId)).toEqual([]);
    expect(await fingerprinted(deleted)).toBe(deleted.length);

    const scheduled = await read('scheduled');
    const entries = entriesOf(scheduled.operationId);
    expect(sorted(entries.map((entry) => entry.id))).toEqual(sorted(deleted));
    expect(entries.every((entry) => entry.deleted && entry.inferred)).toBe(true);
  });

  it('forgets the fingerprints of an object that leaves the config, at the next retention pass', async () => {
    const other = await createReadFixture(stack, { objectName: 'people', receiver: fixture.receiver });
    await runRead(stack, other, { readType: 'backfill', objectName: 'people' });
    expect(await fingerprinted(undefined, other.installationId)).toBe(RECORDS + 20 - 13);
    await (
      await newEntityManager()
    ).execute(
      `update installation_configs set content = jsonb_set(content, '{read,objects}', '{}')
        where id = (select config_id from installations where id = ?)`,
      [other.installationId],
    );
    const progress = await runRetentionTask('read-fingerprints', {
      retention: { ...config().retention, batchSize: 1000 },
    });
    expect(progress).toMatchObject({ done: true, deleted: RECORDS + 20 - 13 });
    expect(await fingerprinted(undefined, other.installationId)).toBe(0);
    // The object still read keeps its own.
    expect(await fingerprinted()).toBe(RECORDS + 20 - 13);
  });

  it('still delivers everything on a backfill, and its fingerprints go with the installation', async () => {
    const backfill = await read('backfill');
    expect(backfill.result.recordsProcessed).toBe(RECORDS + 20 - 13);
    const path = `/projects/${stack.project.id}/integrations/${fixture.integrationId}/installations/${fixture.installationId}`;
    expect((await stack.api('DELETE', path)).status).toBe(204);
    expect(await fingerprinted()).toBe(0);
  });
});
