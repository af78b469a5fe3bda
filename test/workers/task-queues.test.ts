import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { config, ConfigError, loadConfig } from '../../src/config.js';
import { createWorker, type FerryWorker } from '../../src/cli/worker.js';
import { transaction } from '../../src/db/orm.js';
import { recordEvent } from '../../src/domain/events.js';
import { startOutboxRelay } from '../../src/notifications/outbox-relay.js';
import { temporalClient } from '../../src/temporal/client.js';
import { taskQueueOf, WORK_CONCERNS } from '../../src/temporal/contracts/task-queues.js';
import { notificationWorkflowId } from '../../src/temporal/contracts/workflow-ids.js';
import { startReceiver, type Receiver } from '../notifications/receiver.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Work is split by concern onto task queues of its own (installations, deliveries, writes), and a
 * worker serves the concerns FERRY_WORKER_CONCERNS names: a backlog of reads cannot hold up
 * webhooks, and each concern gets the replicas its load needs.
 */

const concerns = (value?: string) =>
  loadConfig({ ...process.env, FERRY_WORKER_CONCERNS: value }).temporal.workerConcerns;

describe('FERRY_WORKER_CONCERNS', () => {
  it('is every concern unless it names some', () => {
    expect(concerns(undefined)).toEqual(['installations', 'deliveries', 'writes']);
    expect(concerns('')).toEqual(WORK_CONCERNS);
    expect(concerns('deliveries')).toEqual(['deliveries']);
    expect(concerns(' writes , deliveries,writes')).toEqual(['writes', 'deliveries']);
  });

  it('refuses a name that is not a concern, saying which are', () => {
    expect(() => concerns('reads')).toThrow(ConfigError);
    expect(() => concerns('deliveries,,')).toThrow(/installations, deliveries, writes/);
  });

  it('derives each queue from the base queue, which installations keep', () => {
    expect(taskQueueOf('ferry', 'installations')).toBe('ferry');
    expect(taskQueueOf('ferry', 'deliveries')).toBe('ferry-deliveries');
    expect(taskQueueOf('ferry', 'writes')).toBe('ferry-writes');
  });
});

describe('a worker serving some concerns', () => {
  let stack: TestStack;
  let receiver: Receiver;
  const running: { worker: FerryWorker; run: Promise<void> }[] = [];

  const start = async (served: ('installations' | 'deliveries' | 'writes')[]) => {
    const worker = await createWorker({
      taskQueue: stack.taskQueue,
      concerns: served,
      workflowBundlePath: process.env.FERRY_TEST_WORKFLOW_BUNDLE,
    });
    running.push({ worker, run: worker.run() });
    return worker;
  };

  beforeAll(async () => {
    stack = await startTestStack();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    for (const { worker, run } of running) {
      worker.shutdown();
      await run;
    }
    await receiver.close();
    await stack.close();
  });

  it('polls only its concerns’ queues', async () => {
    const worker = await start(['installations']);
    expect([...worker.workers.keys()]).toEqual(['installations']);
    expect(worker.of('installations')?.options.taskQueue).toBe(stack.taskQueue);
    expect(worker.of('deliveries')).toBeUndefined();
  });

  it('leaves deliveries waiting until a worker serving deliveries runs, then they go out', async () => {
    const { api, project } = stack;
    const base = `/projects/${project.id}`;
    const hook = await api('POST', `${base}/destinations`, {
      body: {
        name: `hook-${randomUUID().slice(0, 8)}`,
        type: 'webhook',
        metadata: { url: `${receiver.url}/q` },
      },
    });
    expect(hook.status).toBe(201);
    const topic = await api('POST', `${base}/topics`, { body: { name: 'queues' } });
    expect(topic.status).toBe(201);
    const topicId = topic.body.id as string;
    const routed = await api('POST', `${base}/notification-event-topic-routes`, {
      body: { eventType: 'connection.deleted', topicId },
    });
    expect(routed.status).toBe(201);
    const subscribed = await api('POST', `${base}/topic-destination-routes`, {
      body: { topicId, destinationId: hook.body.id },
    });
    expect(subscribed.status).toBe(201);

    const relay = startOutboxRelay(config(), {
      taskQueue: stack.taskQueue,
      onlyProjects: () => [project.id],
    });
    try {
      const eventId = await transaction(
        async (em) =>
          recordEvent(em, project.id, 'connection.deleted', {
            projectId: project.id,
            connectionId: randomUUID(),
          }).id,
      );
      const client = await temporalClient();
      const handle = client.workflow.getHandle(notificationWorkflowId(eventId, hook.body.id as string));
      // Started on the deliveries queue, which only an `installations` worker polls so far: it waits.
      const deadline = Date.now() + 10_000;
      let started;
      while (!started && Date.now() < deadline) {
        started = await handle.describe().catch(() => undefined);
        if (!started) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(started?.taskQueue).toBe(`${stack.taskQueue}-deliveries`);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(receiver.requests.filter((request) => request.path === '/q')).toHaveLength(0);
      expect((await handle.describe()).status.name).toBe('RUNNING');

      await start(['deliveries']);
      const [delivery] = await receiver.waitFor('/q');
      expect(delivery.json).toMatchObject({ notificationType: 'connection.deleted' });
      expect(await handle.result()).toEqual({ outcome: 'delivered', attempts: 1 });
    } finally {
      await relay.stop();
    }
  }, 60_000);
});
