/**
 * An installation's health is whether its records get through: one whose deliveries fail (the
 * destination answers errors on every attempt, or is disabled) is `unhealthy`, with the reason,
 * while its read is still retrying, in every answer that shows the installation.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import {
  configContent,
  connectGroup,
  createDestination,
  createIntegration,
  eventually,
  install,
  type InstallationFixture,
} from './support.js';

let sandbox: Sandbox;
let stack: TestStack;
let receiver: WebhookReceiver;
let fixture: InstallationFixture;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 30 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  resetConfig();
  stack = await startTestStack({ worker: true });
  receiver = await WebhookReceiver.start();
  await createDestination(stack);
  fixture = await createIntegration(stack);
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.stop();
  await sandbox?.close();
  delete process.env.FERRY_SANDBOX_URL;
});

/** The installation as each answer shows it: get, the integration's list, the project's list. */
async function shown(installationId: string, groupRef: string) {
  const one = await stack.api('GET', `${fixture.base}/${installationId}`);
  const ofIntegration = await stack.api('GET', `${fixture.base}?groupRef=${groupRef}`);
  const ofProject = await stack.api(
    'GET',
    `/projects/${stack.project.name}/installations?groupRef=${groupRef}`,
  );
  expect([one.status, ofIntegration.status, ofProject.status]).toEqual([200, 200, 200]);
  const health = (view: { healthStatus: string; healthReason?: string }) => ({
    healthStatus: view.healthStatus,
    healthReason: view.healthReason,
  });
  const views = [one.body, ofIntegration.body[0], ofProject.body[0]].map(health);
  // Every answer agrees.
  expect(views[1]).toEqual(views[0]);
  expect(views[2]).toEqual(views[0]);
  return views[0];
}

describe('installation health', () => {
  it('is unhealthy, saying why, while its destination fails every attempt and while it is disabled', async () => {
    const name = 'failing';
    receiver.respond(() => ({ status: 500, body: 'down for maintenance' }));
    const created = await stack.api('POST', `/projects/${stack.project.name}/destinations`, {
      body: { name, type: 'webhook', metadata: { url: receiver.url() } },
    });
    expect(created.status).toBe(201);
    const { groupRef } = await connectGroup(stack);
    // A backfill of the whole history starts a read at once; its first delivery fails.
    const installation = await install(
      stack,
      fixture,
      groupRef,
      configContent({ destination: name, backfill: { defaultPeriod: { fullHistory: true } } }),
    );
    expect(installation).toMatchObject({ healthStatus: 'healthy' });
    expect(installation).not.toHaveProperty('healthReason');

    await receiver.waitFor(() => receiver.requests.length > 0, 30_000, 'a delivery attempt');
    const failing = await eventually(async () => {
      const health = await shown(installation.id, groupRef);
      return health.healthStatus === 'unhealthy' && health;
    });
    expect(failing.healthReason).toMatch(/^Deliveries to destination "failing" have failed since \d{4}-/);
    // The read is still retrying: the stored status alone would say healthy.
    expect(failing.healthReason).not.toMatch(/latest read failed/);

    const path = `/projects/${stack.project.name}/destinations/${name}`;
    const disabled = await stack.api('PATCH', path, {
      body: { updateMask: ['disabled'], destination: { disabled: true } },
    });
    expect(disabled.status).toBe(200);
    expect((await shown(installation.id, groupRef)).healthReason).toMatch(
      /^Destination "failing" is disabled since \d{4}-.*re-enabled\.$/,
    );

    // Re-enabled, and the receiver answers again: the read resumes and delivers, and it is healthy.
    receiver.respond(() => ({ status: 200 }));
    const enabled = await stack.api('PATCH', path, {
      body: { updateMask: ['disabled'], destination: { disabled: false } },
    });
    expect(enabled.status).toBe(200);
    expect(
      await eventually(
        async () => (await shown(installation.id, groupRef)).healthStatus === 'healthy',
        60_000,
      ),
    ).toBe(true);
    expect(await shown(installation.id, groupRef)).toEqual({
      healthStatus: 'healthy',
      healthReason: undefined,
    });
  }, 120_000);

  it('does not count a failing destination that its config does not deliver to', async () => {
    const { groupRef } = await connectGroup(stack);
    const installation = await install(stack, fixture, groupRef);
    // `hooks` (the fixture's) is fine; `failing` fails, but this installation never sends to it.
    expect(await shown(installation.id, groupRef)).toEqual({
      healthStatus: 'healthy',
      healthReason: undefined,
    });
  });
});
