import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { deliverNotificationAttempt } from '../../activities/notifications.js';
import { config } from '../../src/config.js';
import { em as newEntityManager } from '../../src/db/orm.js';
import { NotificationEventEntity } from '../../src/db/entities/event.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { attemptDelivery } from '../../src/domain/destination-delivery.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * `GET …/attempts/{id}/message`: the bytes an attempt sent, for the messages Ferry keeps; a read's
 * delivered pages are not kept, and the answer says how to send them again.
 */

let stack: TestStack;
let receiver: WebhookReceiver;
let destination: { id: string; name: string };

beforeAll(async () => {
  stack = await startTestStack();
  receiver = await WebhookReceiver.start();
  const signingSecret = generateSigningSecret();
  receiver.secrets.push(signingSecret);
  const created = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
    body: {
      name: `m-${randomUUID().slice(0, 8)}`,
      type: 'webhook',
      metadata: { url: receiver.url() },
      secrets: { signingSecret },
    },
  });
  destination = created.body;
});

afterAll(async () => {
  await receiver?.stop();
  await stack?.close();
});

const attemptsPath = () => `/projects/${stack.project.id}/destinations/${destination.name}/attempts`;

async function latestAttempt(messageId: string): Promise<{ id: string; kind: string }> {
  const list = await stack.api('GET', attemptsPath());
  return list.body.results.find((attempt: { messageId: string }) => attempt.messageId === messageId);
}

describe('the message an attempt carried', () => {
  it('gives back a notification exactly as it was sent', async () => {
    const em = await newEntityManager();
    const event = em.create(NotificationEventEntity, {
      id: randomUUID(),
      projectId: stack.project.id,
      type: 'connection.created',
      data: { projectId: stack.project.id, connectionId: randomUUID(), provider: 'sandboxApiKey' },
      createTime: new Date(),
    });
    await em.flush();
    const outcome = await deliverNotificationAttempt({
      eventId: event.id,
      destinationId: destination.id,
      projectId: stack.project.id,
      attempt: 1,
    });
    expect(outcome.delivered).toBe(true);
    const sent = receiver.requests.at(-1)!;
    const attempt = await latestAttempt(sent.messageId);
    const message = await stack.api('GET', `${attemptsPath()}/${attempt.id}/message`);
    expect(message.status).toBe(200);
    expect(message.body).toEqual({ messageId: sent.messageId, kind: 'notification', body: sent.rawBody });
  });

  it('says a read page is not kept, and how to send it again', async () => {
    const operationId = randomUUID();
    const messageId = `msg_${randomUUID().replaceAll('-', '')}`;
    const result = await attemptDelivery(
      {
        projectId: stack.project.id,
        destinationId: destination.id,
        messageId,
        body: JSON.stringify({ result: [{ id: '1' }] }),
        kind: 'record',
        operationId,
      },
      config(),
    );
    expect(result.delivered).toBe(true);
    const attempt = await latestAttempt(messageId);
    const message = await stack.api('GET', `${attemptsPath()}/${attempt.id}/message`);
    expect(message.status).toBe(404);
    expect(message.body.detail).toContain(`replay operation ${operationId}`);
  });

  it('answers 404 for an attempt of another destination or none, 400 for an id that is not one', async () => {
    expect((await stack.api('GET', `${attemptsPath()}/999999999999/message`)).status).toBe(404);
    const otherPath = `/projects/${stack.project.id}/destinations/no-such/attempts/1/message`;
    expect((await stack.api('GET', otherPath)).status).toBe(404);
    const bad = await stack.api('GET', `${attemptsPath()}/not-an-id/message`);
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].name).toBe('attemptId');
  });
});
