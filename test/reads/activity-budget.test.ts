import { config } from '../../src/config.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { em as newEntityManager } from '../../src/db/orm.js';
import { loadCheckpoint, readPages } from '../../src/domain/reads/pages.js';
import { startRead } from '../../src/domain/reads/start.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { createReadFixture, type ReadFixture } from './fixtures.js';

const CONTACTS = 500;
const PAGE_SIZE = 100;

let sandbox: Sandbox;
let stack: TestStack;
let fixture: ReadFixture;

beforeAll(async () => {
  // Several provider pages, as a provider with small pages gives them: the read moves page by page.
  process.env.FERRY_READ_PROVIDER_PAGE_SIZE = String(PAGE_SIZE);
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack();
  fixture = await createReadFixture(stack, {
    declared: { backfill: { defaultPeriod: { fullHistory: true } }, delivery: { pageSize: PAGE_SIZE } },
  });
});

afterAll(async () => {
  await fixture?.receiver.stop();
  await stack?.close();
  await sandbox?.close();
});

describe('one call of readPages (one read activity)', () => {
  it('stops fetching once its time is up or its pages are read, each page delivered and checkpointed', async () => {
    const operationId = randomUUID();
    await startRead(
      {
        operationId,
        installationId: fixture.installationId,
        projectId: fixture.projectId,
        objectName: 'contacts',
        readType: 'backfill',
      },
      config(),
    );

    // No time at all: the first page is still read, so every call moves the read on.
    const first = await readPages(operationId, config(), { budgetMs: 0 });
    expect(first).toMatchObject({ outcome: 'next', pageIndex: 1, pagesRead: 1, recordsProcessed: PAGE_SIZE });
    expect(fixture.receiver.acceptedRecordIds()).toHaveLength(PAGE_SIZE);

    const second = await readPages(operationId, config(), { maxPages: 2 });
    expect(second).toMatchObject({ outcome: 'next', pageIndex: 3, pagesRead: 2, recordsProcessed: 300 });
    const checkpoint = await loadCheckpoint(await newEntityManager(), operationId);
    expect(checkpoint).toMatchObject({ pageIndex: 3, recordsProcessed: 300, done: false });

    const rest = await readPages(operationId, config());
    expect(rest).toMatchObject({ outcome: 'done', recordsProcessed: CONTACTS });
    const ids = fixture.receiver.acceptedRecordIds();
    expect(ids).toHaveLength(CONTACTS);
    expect(new Set(ids).size).toBe(CONTACTS);
  });
});
