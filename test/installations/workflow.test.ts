import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client, WorkflowExecutionStatusName } from '@temporalio/client';
import { em as newEntityManager, transaction } from '../../src/db/orm.js';
import { currentConfigMessage, sendInstallationConfig } from '../../src/domain/installations/workflow.js';
import { InstallationConfigEntity, InstallationEntity } from '../../src/db/entities/installation.js';
import { OperationEntity } from '../../src/db/entities/operation.js';
import { SubscriptionEntity } from '../../src/db/entities/subscription.js';
import { resetConfig } from '../../src/config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { temporalClient } from '../../src/temporal/client.js';
import {
  FerryGroupRef,
  FerryInstallationId,
  FerryIntegrationId,
  FerryProjectId,
  FerryProvider,
} from '../../src/temporal/search-attributes.js';
import { reconcileInstallations } from '../../src/domain/installations/reconcile.js';
import { createOperation } from '../../src/domain/operations.js';
import { spreadFraction } from '../../workflows/schedule.js';
import { failTriggeredReads } from '../../src/domain/reads/finish.js';
import {
  describeQuery,
  type InstallationWorkflowInput,
  pauseSignal,
  resumeSignal,
  triggerReadSignal,
} from '../../src/temporal/contracts/installation.js';
import { runAttributes } from '../support/run-attributes.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import {
  configContent,
  connectGroup,
  createDestination,
  createIntegration,
  events,
  eventually,
  install,
  type InstallationFixture,
} from './support.js';

let stack: TestStack;
let sandbox: Sandbox;
let fixture: InstallationFixture;
let client: Client;

beforeAll(async () => {
  // The sandbox provider answers the subscription calls the workflow makes through its connector.
  sandbox = await startSandbox({ port: 0, contacts: 100, companies: 10, deals: 10 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  resetConfig();
  stack = await startTestStack({ worker: true });
  await createDestination(stack);
  fixture = await createIntegration(stack);
  client = await temporalClient();
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await sandbox?.close();
  delete process.env.FERRY_SANDBOX_URL;
});

const handleOf = (installationId: string) => client.workflow.getHandle(`installation/${installationId}`);
/** The workflow's view once it has applied its first config (it answers queries before that, empty). */
const describeInstallation = (installationId: string) =>
  eventually(async () => {
    const view = await handleOf(installationId).query(describeQuery);
    return view.ready ? view : undefined;
  });
const statusOf = async (installationId: string): Promise<WorkflowExecutionStatusName> =>
  (await handleOf(installationId).describe()).status.name;

describe('the installation workflow, through the API', () => {
  it('starts with the installation, findable by search attributes and named in its memo', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const description = await handleOf(created.id).describe();
    expect(description.status.name).toBe('RUNNING');
    expect(description.type).toBe('installationWorkflow');
    expect(description.taskQueue).toBe(stack.taskQueue);
    expect(description.typedSearchAttributes.get(FerryProjectId)).toBe(stack.project.id);
    expect(description.typedSearchAttributes.get(FerryIntegrationId)).toBe(fixture.integrationId);
    expect(description.typedSearchAttributes.get(FerryInstallationId)).toBe(created.id);
    expect(description.typedSearchAttributes.get(FerryProvider)).toBe('sandboxApiKey');
    expect(description.typedSearchAttributes.get(FerryGroupRef)).toBe(groupRef);
    expect(await description.memo).toEqual({
      projectName: stack.project.name,
      integrationName: fixture.integrationName,
      groupName: `${groupRef} Inc.`,
      groupRef,
      provider: 'sandboxApiKey',
      // Said from the start, so the repair loop never has to ask a workflow whose first task waits.
      configId: created.config.id,
      revisionId: created.config.revisionId,
    });
    const found = await eventually(async () => {
      const ids: string[] = [];
      for await (const execution of client.workflow.list({
        query: `FerryGroupRef = '${groupRef}' AND FerryProvider = 'sandboxApiKey'`,
      })) {
        ids.push(execution.workflowId);
      }
      return ids.length ? ids : undefined;
    });
    expect(found).toEqual([`installation/${created.id}`]);

    const view = await describeInstallation(created.id);
    expect(view).toMatchObject({
      installationId: created.id,
      projectId: stack.project.id,
      configId: created.config.id,
      paused: [],
      running: [],
    });
    // `deals` is `enabled: always` in the manifest: scheduled although the config does not select it.
    expect(view.objects.map((object) => object.objectName)).toEqual(['contacts', 'deals']);
    // A yearly schedule: each fire comes the installation's offset into the spread window
    // (FERRY_SCHEDULE_SPREAD_SECONDS, 300 s by default) after midnight on January 1st.
    expect(view.spread).toEqual({ maxSeconds: 300, fraction: spreadFraction(created.id) });
    for (const object of view.objects) {
      const fire = new Date(object.nextFireAt!);
      expect(fire.getTime() - Date.UTC(fire.getUTCFullYear(), 0, 1)).toBe(
        Math.floor(view.spread.fraction * 300_000),
      );
    }
    // Its first task checks the installation and its backfills as a local activity: no activity task
    // for the server to schedule and record, no second workflow task (creation's cost halved).
    const history = await handleOf(created.id).fetchHistory();
    const scheduled = history.events!.filter((event) => event.activityTaskScheduledEventAttributes);
    expect(
      scheduled.map((event) => event.activityTaskScheduledEventAttributes!.activityType!.name),
    ).not.toContain('objectsNeedingBackfill');
    expect(
      history.events!.some(
        (event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity',
      ),
    ).toBe(true);
  });

  it('pauses and unpauses through the read host, and the same by signal', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const path = `/projects/${stack.project.name}/integrations/${fixture.integrationId}/installations/${created.id}`;
    const paused = await stack.read('POST', `${path}:pause`, {
      body: { objects: ['contacts'], note: 'customer asked' },
    });
    expect(paused.status).toBe(204);
    await eventually(async () => (await describeInstallation(created.id)).paused.includes('contacts'));
    const view = await describeInstallation(created.id);
    expect(view.objects.find((object) => object.objectName === 'contacts')).toMatchObject({
      paused: true,
      pauseNote: 'customer asked',
    });
    expect(view.objects.find((object) => object.objectName === 'deals')).toMatchObject({ paused: false });

    expect((await stack.read('POST', `${path}:unpause`, { body: {} })).status).toBe(204);
    await eventually(async () => (await describeInstallation(created.id)).paused.length === 0);

    await handleOf(created.id).signal(pauseSignal, {});
    await eventually(async () => (await describeInstallation(created.id)).paused.length === 2);
    await handleOf(created.id).signal(resumeSignal, { objects: ['deals'] });
    await eventually(async () => (await describeInstallation(created.id)).paused.join() === 'contacts');

    const unknown = await stack.read('POST', `${path}:pause`, { body: { objects: ['tickets'] } });
    expect(unknown).toMatchObject({
      status: 400,
      body: { issues: [expect.objectContaining({ name: 'objects', value: 'tickets' })] },
    });
    expect((await stack.api('POST', `${path}:pause`, { body: {} })).status).toBe(405);
    expect(
      (await stack.read('POST', `${path.replace(created.id, randomUUID())}:pause`, { body: {} })).status,
    ).toBe(404);
    expect((await stack.read('POST', `${path}:pause`, { body: { objects: 'contacts' } })).status).toBe(400);
  });

  it('re-plans a schedule as soon as PATCH changes it', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const before = await describeInstallation(created.id);
    expect(Date.parse(before.objects[0].nextFireAt!) - Date.now()).toBeGreaterThan(24 * 3600_000);
    const patched = await stack.api('PATCH', `${fixture.base}/${created.id}`, {
      body: {
        updateMask: ['config.content.read.objects.contacts.schedule'],
        installation: { config: { content: { read: { objects: { contacts: { schedule: '0 * * * *' } } } } } },
      },
    });
    expect(patched.status).toBe(200);
    // The update has been applied by the time PATCH answers: no polling.
    const after = await handleOf(created.id).query(describeQuery);
    expect(after.configId).toBe(patched.body.config.id);
    const contacts = after.objects.find((object) => object.objectName === 'contacts')!;
    expect(contacts.schedule).toBe('0 * * * *');
    // Within the hour, plus at most the 5-minute spread.
    expect(Date.parse(contacts.nextFireAt!) - Date.now()).toBeLessThanOrEqual(3600_000 + 300_000);
  });

  it('starts a real read operation on a triggerRead signal', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const operationId = randomUUID();
    await handleOf(created.id).signal(triggerReadSignal, { objectName: 'contacts', operationId });
    const operation = await eventually(() =>
      transaction((em) => em.findOne(OperationEntity, { id: operationId })).then((row) => row ?? undefined),
    );
    expect(operation).toMatchObject({
      installationId: created.id,
      projectId: stack.project.id,
      actionType: 'read',
      configId: created.config.id,
    });
    expect((await client.workflow.getHandle(`read/${operationId}`).describe()).type).toBe(
      'readObjectWorkflow',
    );
    expect(await runAttributes(`read/${operationId}`)).toEqual({
      projectId: stack.project.id,
      integrationId: fixture.integrationId,
      installationId: created.id,
      provider: 'sandboxApiKey',
      groupRef,
    });
    expect((await stack.api('DELETE', `${fixture.base}/${created.id}`)).status).toBe(204);
    expect(await statusOf(created.id)).toBe('CANCELLED');
    expect(['COMPLETED', 'CANCELLED', 'TERMINATED', 'FAILED']).toContain(
      (await client.workflow.getHandle(`read/${operationId}`).describe()).status.name,
    );
  });

  it('fails a queued triggered read whose object leaves the config, with read.triggered.error', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const integrationPath = `/projects/${stack.project.name}/integrations/${fixture.integrationId}`;
    // While the object is paused, its triggered read waits in the workflow's queue.
    const paused = await stack.read('POST', `${integrationPath}/installations/${created.id}:pause`, {
      body: { objects: ['contacts'] },
    });
    expect(paused.status).toBe(204);
    const triggered = await stack.read('POST', `${integrationPath}/objects/contacts`, {
      body: { groupRef, mode: 'async', sinceTimestamp: '2026-01-01T00:00:00.000Z' },
    });
    expect(triggered.status).toBe(201);
    const { operationId } = triggered.body as { operationId: string };
    await eventually(async () => {
      const view = await handleOf(created.id).query(describeQuery);
      return view.objects.find((object) => object.objectName === 'contacts')?.queuedTriggers === 1;
    });

    const patched = await stack.api('PATCH', `${fixture.base}/${created.id}`, {
      body: {
        updateMask: ['config.content.read.objects'],
        installation: { config: { content: { read: { objects: {} } } } },
      },
    });
    expect(patched.status).toBe(200);
    const reason = 'The object is not read by this installation (any more).';
    const operation = await eventually(() =>
      transaction((em) => em.findOne(OperationEntity, { id: operationId, status: 'failure' })).then(
        (row) => row ?? undefined,
      ),
    );
    expect(operation.result).toBe(reason);
    const [event] = (await events(stack.project.id, 'read.triggered.error')).filter(
      (data) => data.operationId === operationId,
    );
    expect(event).toMatchObject({
      operationId,
      installationId: created.id,
      objectName: 'contacts',
      groupRef,
      fromTimestamp: '2026-01-01T00:00:00.000Z',
      error: reason,
    });
    // No end was asked for: untilTimestamp is left out, never null (the public type is a string).
    expect(event).not.toHaveProperty('untilTimestamp');
    const logs = await stack.api('GET', `/projects/${stack.project.name}/operations/${operationId}/logs`);
    expect(logs.status).toBe(200);
    expect(JSON.stringify(logs.body)).toContain(reason);
    // A retried activity finds the operation ended and records nothing twice.
    await failTriggeredReads([operationId], reason);
    const again = (await events(stack.project.id, 'read.triggered.error')).filter(
      (data) => data.operationId === operationId,
    );
    expect(again).toHaveLength(1);
  });

  it('creates, changes and removes the provider subscription as the subscribe config changes', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef, {
      ...configContent(),
      subscribe: {
        objects: {
          contacts: { objectName: 'contacts', destination: 'hooks', createEvent: { enabled: 'always' } },
        },
      },
    });
    const row = await eventually(() =>
      transaction((em) => em.findOne(SubscriptionEntity, { installationId: created.id })).then(
        (found) => found ?? undefined,
      ),
    );
    expect(row).toMatchObject({
      objectName: 'contacts',
      provider: 'sandboxApiKey',
      projectId: stack.project.id,
    });
    const hooks = await fetch(`${sandbox.url}/api/v1/webhooks`, {
      headers: { 'x-api-key': 'sandbox-demo-key' },
    }).then(
      (response) => response.json() as Promise<{ results: { id: string; url: string; events: string[] }[] }>,
    );
    const hook = hooks.results.find((candidate) => candidate.id === row.providerSubscriptionId)!;
    expect(hook.url).toMatch(new RegExp(`/v1/webhooks/providers/sandboxApiKey/${row.id}$`));
    await eventually(async () =>
      (await events(stack.project.id, 'subscribe.create.success')).some(
        (data) => data.installationId === created.id,
      ),
    );
    expect((await describeInstallation(created.id)).subscription.objects).toEqual({ contacts: row.id });

    const removed = await stack.api('PATCH', `${fixture.base}/${created.id}`, {
      body: { updateMask: ['config.content.subscribe'], installation: { config: { content: {} } } },
    });
    expect(removed.status).toBe(200);
    await eventually(async () =>
      (await events(stack.project.id, 'subscribe.delete.success')).some(
        (data) => data.installationId === created.id,
      ),
    );
    expect(await transaction((em) => em.count(SubscriptionEntity, { installationId: created.id }))).toBe(0);
  });

  it('ends the workflow when the installation is deleted', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    expect((await stack.api('DELETE', `${fixture.base}/${created.id}`)).status).toBe(204);
    expect(await statusOf(created.id)).toBe('CANCELLED');
  });

  it('reconcile restarts a missing workflow from PostgreSQL, resends a missed config and ends orphans', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    await handleOf(created.id).terminate('simulating a lost Temporal server');
    expect(await statusOf(created.id)).toBe('TERMINATED');

    const { groupRef: orphanGroup } = await connectGroup(stack);
    const orphan = await install(stack, fixture, orphanGroup);
    await transaction(async (em) => {
      await em.nativeDelete(InstallationEntity, { id: orphan.id });
    });

    // Both were created just now: left to their requests (the listing lags a start by seconds).
    const young = await reconcileInstallations({ projectId: stack.project.id });
    expect(young).toMatchObject({ started: 0, orphansEnded: 0, failed: 0 });
    expect(await statusOf(created.id)).toBe('TERMINATED');
    expect(await statusOf(orphan.id)).toBe('RUNNING');
    const result = await reconcileInstallations({ projectId: stack.project.id, graceMs: 0 });
    expect(result).toMatchObject({ started: 1, orphansEnded: 1, failed: 0 });
    expect(await statusOf(created.id)).toBe('RUNNING');
    expect(await statusOf(orphan.id)).toBe('TERMINATED');
    const view = await describeInstallation(created.id);
    expect(view.configId).toBe(created.config.id);
    expect(view.objects.map((object) => object.objectName)).toEqual(['contacts', 'deals']);

    const again = await reconcileInstallations({ projectId: stack.project.id, graceMs: 0 });
    expect(again).toMatchObject({ started: 0, configResent: 0, orphansEnded: 0, failed: 0 });
  });

  it('reconcile starts a never-run installation on the schedule it was created with, and one that ran afresh', async () => {
    const neverRan = await install(stack, fixture, (await connectGroup(stack)).groupRef);
    const ranBefore = await install(stack, fixture, (await connectGroup(stack)).groupRef);
    await transaction(async (em) => {
      createOperation(em, {
        projectId: stack.project.id,
        integrationId: fixture.integrationId,
        installationId: ranBefore.id,
        configId: ranBefore.config.id,
        actionType: 'read',
        metadata: { objects: ['contacts'], readType: 'scheduled' },
      });
    });
    // Their starts at creation failed, or Temporal lost them.
    for (const { id } of [neverRan, ranBefore]) await handleOf(id).terminate('simulating a lost start');

    await reconcileInstallations({ projectId: stack.project.id, graceMs: 0 });
    expect(await statusOf(neverRan.id)).toBe('RUNNING');
    expect(await statusOf(ranBefore.id)).toBe('RUNNING');
    /** The input of the installation's running workflow. */
    const inputOf = async (installationId: string) => {
      const { events } = await handleOf(installationId).fetchHistory();
      const [payload] = events![0].workflowExecutionStartedEventAttributes!.input!.payloads!;
      return JSON.parse(Buffer.from(payload.data!).toString()) as InstallationWorkflowInput;
    };
    const createTime = await transaction(async (em) =>
      (await em.findOneOrFail(InstallationEntity, { id: neverRan.id })).createTime.toISOString(),
    );
    // Its first fires are planned from its creation, so a fire due meanwhile still runs.
    expect((await inputOf(neverRan.id)).scheduleFrom).toBe(createTime);
    // A restarted one resumes its reads and does not make up fires missed while it was gone.
    expect((await inputOf(ranBefore.id)).scheduleFrom).toBeUndefined();
  });

  it('reconcile resends a config version committed while its workflow was never told (a crashed PATCH)', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const newConfigId = randomUUID();
    await transaction(async (em) => {
      const current = await em.findOneOrFail(InstallationConfigEntity, { id: created.config.id });
      em.create(InstallationConfigEntity, { ...current, id: newConfigId, createTime: new Date() });
      await em.nativeUpdate(InstallationEntity, { id: created.id }, { configId: newConfigId });
    });

    const result = await reconcileInstallations({ projectId: stack.project.id, graceMs: 0 });
    expect(result).toMatchObject({ started: 0, configResent: 1, failed: 0 });
    expect((await describeInstallation(created.id)).configId).toBe(newConfigId);
    const again = await reconcileInstallations({ projectId: stack.project.id, graceMs: 0 });
    expect(again).toMatchObject({ configResent: 0, failed: 0 });
  });

  it('reconcile restores a config PostgreSQL holds that the workflow applied before (a PATCH that told the workflow, then died before committing)', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    // A committed PATCH: the workflow applies it under the update id config/<id>.
    const committed = randomUUID();
    const told = randomUUID();
    await transaction(async (em) => {
      const current = await em.findOneOrFail(InstallationConfigEntity, { id: created.config.id });
      em.create(InstallationConfigEntity, { ...current, id: committed, createTime: new Date() });
      em.create(InstallationConfigEntity, { ...current, id: told, createTime: new Date() });
      await em.nativeUpdate(InstallationEntity, { id: created.id }, { configId: committed });
    });
    expect(await reconcileInstallations({ projectId: stack.project.id, graceMs: 0 })).toMatchObject({
      configResent: 1,
    });
    // The next PATCH told the workflow, and its process died before the commit.
    const em = await newEntityManager();
    const installation = await em.findOneOrFail(InstallationEntity, { id: created.id });
    await sendInstallationConfig(
      created.id,
      await currentConfigMessage(em, { ...installation, configId: told }),
      `config/${told}`,
    );
    expect((await describeInstallation(created.id)).configId).toBe(told);

    const result = await reconcileInstallations({ projectId: stack.project.id, graceMs: 0 });
    expect(result).toMatchObject({ configResent: 1, failed: 0 });
    expect((await describeInstallation(created.id)).configId).toBe(committed);
  });
});
