import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { resetConfig, config } from '../../src/config.js';
import { ProblemError } from '../../src/core/problem.js';
import { InstallationEntity } from '../../src/db/entities/installation.js';
import { OperationEntity } from '../../src/db/entities/operation.js';
import { em as newEntityManager, transaction } from '../../src/db/orm.js';
import { holdRepairMark } from '../../src/db/repair-marks.js';
import { repairUnfinishedChanges, withRepairMark } from '../../src/domain/marked-changes.js';
import { createOperation } from '../../src/domain/operations.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { connectGroup, createDestination, createIntegration, install } from '../installations/support.js';

/**
 * Repair marks: a change's mark is invisible to repair while its process holds it, and repaired at
 * once when that process's connection dies, with no stale window to wait out.
 */

let sandbox: Sandbox;
let stack: TestStack;
let installationId: string;
let integrationId: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 5, companies: 1, deals: 1 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  resetConfig();
  stack = await startTestStack({ worker: true });
  await createDestination(stack);
  const fixture = await createIntegration(stack);
  integrationId = fixture.integrationId;
  const { groupRef } = await connectGroup(stack);
  installationId = (await install(stack, fixture, groupRef)).id;
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await sandbox?.close();
  delete process.env.FERRY_SANDBOX_URL;
});

const project = () => stack.project.id;

async function markCount(id: string): Promise<number> {
  const [row] = await (
    await newEntityManager()
  ).execute<{ n: string }[]>('select count(*) as n from repair_marks where id = ?', [id]);
  return Number(row.n);
}

/** A synchronous write's operation, left in progress as a process that died would leave it. */
async function openWriteOperation(): Promise<string> {
  const id = randomUUID();
  await transaction(async (tx) => {
    const installation = await tx.findOneOrFail(InstallationEntity, { id: installationId });
    createOperation(tx, {
      id,
      projectId: project(),
      integrationId,
      installationId,
      configId: installation.configId,
      actionType: 'write',
      metadata: { objects: ['contacts'], writeType: 'create', mode: 'synchronous', records: 1 },
    });
  });
  return id;
}

/** Ends the backend that holds the mark's lock: what PostgreSQL sees when a process is SIGKILLed. */
async function killHolder(markId: string): Promise<void> {
  const client = new pg.Client({ connectionString: config().databaseUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query(
      `select pg_terminate_backend(pid) from pg_locks
        where locktype = 'advisory' and classid = 4242 and objid = hashtext($1)::oid and granted`,
      [markId],
    );
    expect(rowCount).toBe(1);
  } finally {
    await client.end();
  }
}

describe('repair marks', () => {
  it('leave a change in flight alone, and repair it the moment its process dies', async () => {
    const operationId = await openWriteOperation();
    const mark = await holdRepairMark({
      projectId: project(),
      installationId,
      operationId,
      reason: 'write synchronously',
    });

    expect(await repairUnfinishedChanges({ projectId: project() })).toMatchObject({ examined: 0 });
    const em = await newEntityManager();
    expect((await em.findOneOrFail(OperationEntity, { id: operationId })).status).toBe('in_progress');

    await killHolder(mark.id);
    await mark.release(false); // what is left of this "process": its dead connection goes back
    const repaired = await repairUnfinishedChanges({ projectId: project() });
    expect(repaired).toMatchObject({ examined: 1, repairs: { ended: 1 }, failed: 0 });
    const ended = await em.fork().findOneOrFail(OperationEntity, { id: operationId });
    expect(ended.status).toBe('failure');
    expect(await markCount(mark.id)).toBe(0);
  });

  it('go with a change that completes or is refused, and stay for one that fails otherwise', async () => {
    let id = '';
    const base = { projectId: project(), installationId, reason: 'test' };
    await withRepairMark(base, async (held) => void (id = held.id));
    expect(await markCount(id)).toBe(0);

    await expect(
      withRepairMark(base, async (held) => {
        id = held.id;
        throw ProblemError.conflict('refused before Temporal heard of it');
      }),
    ).rejects.toThrow(ProblemError);
    expect(await markCount(id)).toBe(0);

    await expect(
      withRepairMark(base, async (held) => {
        id = held.id;
        throw new Error('the commit failed after the workflow was told');
      }),
    ).rejects.toThrow('commit failed');
    expect(await markCount(id)).toBe(1);
    // Nobody holds it now: the next pass checks the installation (in step) and lets it go.
    expect(await repairUnfinishedChanges({ projectId: project() })).toMatchObject({ examined: 1, failed: 0 });
    expect(await markCount(id)).toBe(0);
  });

  it('repair a triggered read whose process died before its workflow heard of it', async () => {
    const em = await newEntityManager();
    const operationId = randomUUID();
    await transaction(async (tx) => {
      const installation = await tx.findOneOrFail(InstallationEntity, { id: installationId });
      createOperation(tx, {
        id: operationId,
        projectId: project(),
        integrationId,
        installationId,
        configId: installation.configId,
        actionType: 'read',
        metadata: { objects: ['contacts'], readType: 'triggered', backfill: true, requested: {} },
      });
    });
    const mark = await holdRepairMark({
      projectId: project(),
      installationId,
      operationId,
      reason: 'trigger a read',
    });
    await killHolder(mark.id);
    await mark.release(false);
    expect(await repairUnfinishedChanges({ projectId: project() })).toMatchObject({
      examined: 1,
      repairs: { resumed: 1 },
    });
    const operation = await em.findOneOrFail(OperationEntity, { id: operationId });
    expect(operation.metadata.resumedAfterStall).toBe(true);
  });
});
