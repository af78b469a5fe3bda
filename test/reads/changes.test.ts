import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { em as newEntityManager } from '../../src/db/orm.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { createReadFixture, runRead, type ReadFixture } from './fixtures.js';

/**
 * Scheduled reads through the whole pipeline follow what the provider returned: a change is
 * delivered once though the next read's overlap lists it again, and a deletion reaches the builder
 * as an entry marked deleted, unless the read object asks for live records only.
 */

const CONTACTS = 30;
let sandbox: Sandbox;
let stack: TestStack;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 1, deals: 1 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
});

afterAll(async () => {
  await stack?.close();
  await sandbox?.close();
});

async function sandboxCall(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${sandbox.url}/api/v1${path}`, {
    method,
    headers: { 'x-api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return response.status === 204 ? undefined : response.json();
}

/** The entries of every message of one operation. */
function entriesOf(fixture: ReadFixture, operationId: string): any[] {
  return fixture.receiver
    .accepted()
    .filter((request) => request.body?.operationId === operationId)
    .flatMap((request) => request.body.result);
}

async function seenRows(fixture: ReadFixture): Promise<number> {
  const rows = await (
    await newEntityManager()
  ).execute<{ count: string }[]>('select count(*) from read_seen where installation_id = ?', [
    fixture.installationId,
  ]);
  return Number(rows[0].count);
}

describe('scheduled reads after a backfill', () => {
  let fixture: ReadFixture;
  let ids: string[];

  beforeAll(async () => {
    fixture = await createReadFixture(stack, {
      declared: { backfill: { defaultPeriod: { fullHistory: true } } },
    });
    const backfill = await runRead(stack, fixture, { readType: 'backfill' });
    expect(backfill.result.recordsProcessed).toBe(CONTACTS);
    ids = entriesOf(fixture, backfill.operationId).map((entry) => entry.raw.id);
  });
  afterAll(() => fixture?.receiver.stop());

  it('deliver a change and a deletion once each, and nothing the backfill delivered', async () => {
    await sandboxCall('PATCH', `/contacts/${ids[3]}`, { lastName: 'Changed' });
    await sandboxCall('DELETE', `/contacts/${ids[4]}`);
    const first = await runRead(stack, fixture, { readType: 'scheduled' });
    const entries = entriesOf(fixture, first.operationId);
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ raw: { id: ids[3], lastName: 'Changed' } });
    expect(entries[0].deleted).toBeUndefined();
    expect(entries[1]).toMatchObject({ id: ids[4], deleted: true });

    // The next read's window overlaps what this one saw: it delivers none of it again.
    const second = await runRead(stack, fixture, { readType: 'scheduled' });
    expect(second.result.recordsProcessed).toBe(0);
    expect(entriesOf(fixture, second.operationId)).toEqual([]);
    // What it remembers to recognise them stays small: the versions within the overlap.
    expect(await seenRows(fixture)).toBeLessThanOrEqual(2);
  });

  it('records the watermark from the provider’s times, not from the end of the window', async () => {
    const [row] = await (
      await newEntityManager()
    ).execute<{ watermark: Date }[]>(
      'select watermark from read_watermarks where installation_id = ? and object_name = ?',
      [fixture.installationId, 'contacts'],
    );
    const contact = await sandboxCall('GET', `/contacts/${ids[3]}`);
    expect(new Date(row.watermark).getTime()).toBeGreaterThanOrEqual(Date.parse(contact.updatedAt));
  });
});

describe('a read object that wants live records only', () => {
  it('gets the change but not the deletion', async () => {
    const fixture = await createReadFixture(stack, {
      declared: { backfill: { defaultPeriod: { fullHistory: true } }, delivery: { deletions: false } },
    });
    const backfill = await runRead(stack, fixture, { readType: 'backfill' });
    const ids = entriesOf(fixture, backfill.operationId).map((entry) => entry.raw.id);
    await sandboxCall('PATCH', `/contacts/${ids[10]}`, { lastName: 'Live' });
    await sandboxCall('DELETE', `/contacts/${ids[11]}`);
    const read = await runRead(stack, fixture, { readType: 'scheduled' });
    const entries = entriesOf(fixture, read.operationId);
    expect(entries.map((entry) => entry.raw.id)).toEqual([ids[10]]);
    await fixture.receiver.stop();
  });
});
