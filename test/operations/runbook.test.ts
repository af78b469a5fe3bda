import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { config } from '../../src/config.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { temporalCliPath } from '../../src/temporal/cli.js';
import { eventually } from '../installations/support.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The README's runbook, step by step, as an operator runs it: the Temporal CLI against the
 * installation's workflow (what the Temporal UI sends too) and the equivalent API calls.
 */

const run = promisify(execFile);
let sandbox: Sandbox;
let stack: TestStack;
let receiver: WebhookReceiver;
let installationId: string;
let integrationId: string;
const groupRef = `customer-${randomUUID().slice(0, 8)}`;

/** `temporal <args>` against the test's Temporal server, JSON out. */
async function temporal(...args: string[]): Promise<any> {
  const { stdout } = await run(temporalCliPath(), [
    ...args,
    '--address',
    config().temporal.address,
    '--namespace',
    config().temporal.namespace,
    '-o',
    'json',
  ]);
  return JSON.parse(stdout);
}

const operation = async (id: string) =>
  (await stack.api('GET', `/projects/${stack.project.id}/operations/${id}`)).body;
const finished = (id: string) =>
  eventually(async () => {
    const body = await operation(id);
    return body.status !== 'in_progress' && body;
  }, 60_000);

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 120, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  const signingSecret = generateSigningSecret();
  receiver = await WebhookReceiver.start([signingSecret]);
  await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: { name: 'crm', type: 'webhook', metadata: { url: receiver.url() }, secrets: { signingSecret } },
  });
  await stack.api('POST', `/projects/${stack.project.id}/connections:generate`, {
    body: { provider: 'sandboxApiKey', groupRef, consumerRef: 'ops', apiKey: 'sandbox-demo-key' },
  });
  const name = `runbook-${randomUUID().slice(0, 8)}`;
  const integration = await stack.api('POST', `/projects/${stack.project.id}/integrations`, {
    body: {
      name,
      provider: 'sandboxApiKey',
      latestRevision: {
        specVersion: '1.0.0',
        content: {
          name,
          provider: 'sandboxApiKey',
          read: {
            objects: [
              {
                objectName: 'contacts',
                destination: 'crm',
                schedule: '0 0 1 1 *',
                delivery: { pageSize: 50 },
              },
            ],
          },
        },
      },
    },
  });
  integrationId = integration.body.id;
  const installation = await stack.api(
    'POST',
    `/projects/${stack.project.id}/integrations/${integrationId}/installations`,
    {
      body: {
        groupRef,
        config: {
          content: {
            provider: 'sandboxApiKey',
            read: {
              objects: {
                contacts: {
                  objectName: 'contacts',
                  schedule: '0 0 1 1 *',
                  destination: 'crm',
                  selectedFields: {},
                },
              },
            },
          },
        },
      },
    },
  );
  expect(installation.status).toBe(201);
  installationId = installation.body.id;
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.stop();
  await sandbox?.close();
});

describe('the runbook', () => {
  it('finds a customer’s installation: by group in the API, by search attribute in Temporal', async () => {
    const listed = await stack.api('GET', `/projects/${stack.project.id}/installations?groupRef=${groupRef}`);
    expect(listed.body.map((installation: any) => installation.id)).toEqual([installationId]);
    const workflows = await temporal('workflow', 'list', '--query', `FerryGroupRef='${groupRef}'`);
    expect(workflows.map((workflow: any) => workflow.execution.workflowId)).toEqual([
      `installation/${installationId}`,
    ]);
  });

  it('backfills a window from the CLI, and says why one cannot run', async () => {
    const backfill = await temporal(
      'workflow',
      'update',
      'execute',
      '--workflow-id',
      `installation/${installationId}`,
      '--name',
      'requestBackfill',
      '--input',
      JSON.stringify({ objectName: 'contacts', days: 3650 }),
    );
    expect(await finished(backfill.result.operationId)).toMatchObject({
      status: 'success',
      metadata: { readType: 'backfill' },
    });
    const refused = await temporal(
      'workflow',
      'update',
      'execute',
      '--workflow-id',
      `installation/${installationId}`,
      '--name',
      'requestBackfill',
      '--input',
      JSON.stringify({ objectName: 'contacts' }),
    ).catch((error: { stderr?: string }) => error.stderr);
    expect(String(refused)).toContain('manifest has no backfill');
  });

  it('sees why an installation is unhealthy, retries the failed read, and recovers', async () => {
    receiver.respond(() => ({ status: 400 }));
    const trigger = await stack.read(
      'POST',
      `/projects/${stack.project.id}/integrations/${integrationId}/objects/contacts`,
      {
        body: { groupRef, mode: 'async' },
      },
    );
    const failed = await finished(trigger.body.operationId);
    expect(failed.status).toBe('failure');
    const installation = await stack.api(
      'GET',
      `/projects/${stack.project.id}/integrations/${integrationId}/installations/${installationId}`,
    );
    expect(installation.body).toMatchObject({ healthStatus: 'unhealthy', lastOperationStatus: 'failure' });
    const logs = await stack.api('GET', `/projects/${stack.project.id}/operations/${failed.id}/logs`);
    expect(logs.body.some((log: any) => log.severity === 'ERROR')).toBe(true);
    const described = await temporal(
      'workflow',
      'query',
      '--workflow-id',
      `installation/${installationId}`,
      '--name',
      'describe',
    );
    expect(described.queryResult[0].objects[0]).toMatchObject({
      objectName: 'contacts',
      lastRun: { succeeded: false },
    });
    expect(failed.metadata.temporal.workflowId).toBe(`read/${failed.id}`);

    receiver.respond(() => ({ status: 200 }));
    const retry = await temporal(
      'workflow',
      'update',
      'execute',
      '--workflow-id',
      `installation/${installationId}`,
      '--name',
      'retryOperation',
      '--input',
      JSON.stringify({ operationId: failed.id }),
    );
    expect(retry.result).toMatchObject({ retryOf: failed.id, actionType: 'read' });
    expect(await finished(retry.result.operationId)).toMatchObject({
      status: 'success',
      metadata: { retryOf: failed.id },
    });
    const healthy = await stack.api(
      'GET',
      `/projects/${stack.project.id}/integrations/${integrationId}/installations/${installationId}`,
    );
    expect(healthy.body.healthStatus).toBe('healthy');
  });

  it('pauses from the CLI and resumes through the API', async () => {
    await temporal(
      'workflow',
      'update',
      'execute',
      '--workflow-id',
      `installation/${installationId}`,
      '--name',
      'pauseReads',
      '--input',
      JSON.stringify({ objects: ['contacts'], note: 'provider maintenance' }),
    );
    const paused = await temporal(
      'workflow',
      'query',
      '--workflow-id',
      `installation/${installationId}`,
      '--name',
      'describe',
    );
    expect(paused.queryResult[0].paused).toEqual(['contacts']);
    const resumed = await stack.read(
      'POST',
      `/projects/${stack.project.id}/integrations/${integrationId}/installations/${installationId}:unpause`,
      { body: {} },
    );
    expect(resumed.status).toBe(204);
    await eventually(async () => {
      const view = await temporal(
        'workflow',
        'query',
        '--workflow-id',
        `installation/${installationId}`,
        '--name',
        'describe',
      );
      return (view.queryResult[0].paused ?? []).length === 0; // the CLI prints an empty list as null
    });
  });

  it('rotates a destination’s signing secret, the old one signing alongside for the grace period', async () => {
    const rotated = await stack.api('GET', `/projects/${stack.project.id}/destinations/crm?rotate=true`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secrets.signingSecret).toMatch(/^whsec_/);
    receiver.secrets.push(rotated.body.secrets.signingSecret);
    const before = receiver.requests.length;
    const trigger = await stack.read(
      'POST',
      `/projects/${stack.project.id}/integrations/${integrationId}/objects/contacts`,
      {
        body: { groupRef, mode: 'async', sinceTimestamp: '2000-01-01T00:00:00Z' },
      },
    );
    expect((await finished(trigger.body.operationId)).status).toBe('success');
    const signed = receiver.requests.slice(before);
    expect(signed.length).toBeGreaterThan(0);
    expect(signed.every((request) => request.verified)).toBe(true);
  });
});
