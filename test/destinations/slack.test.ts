import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { transaction } from '../../src/db/orm.js';
import { recordEvent } from '../../src/domain/events.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startReceiver, type Receiver } from '../notifications/receiver.js';
import { createReadFixture, runRead } from '../reads/fixtures.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Slack destinations against a local HTTP receiver standing in for the incoming webhook: a read is
 * posted as readable summaries (object, count, installation, operation link), never its records;
 * notifications reach a Slack destination through topics like any other.
 */

const CONTACTS = 120;

let sandbox: Sandbox;
let stack: TestStack;
let slack: Receiver;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  slack = await startReceiver();
});

afterAll(async () => {
  await slack?.close();
  await stack?.close();
  await sandbox?.close();
});

const projectPath = () => `/projects/${stack.project.id}`;

describe('slack destinations', () => {
  it('posts a summary per message of a read, without the records', async () => {
    const path = `/services/T0/B0/${randomUUID()}`;
    const fixture = await createReadFixture(stack, {
      declared: { delivery: { pageSize: 50 } },
      destination: { type: 'slack', metadata: { url: `${slack.url}${path}` } },
    });
    await fixture.receiver.stop();
    const { operationId, result } = await runRead(stack, fixture, { readType: 'triggered' });
    expect(result.status).toBe('success');
    const posts = await slack.waitFor(path, 3);
    expect(posts).toHaveLength(3);
    const texts = posts.map((post) => post.json.text as string);
    expect(texts.filter((text) => text.includes('50 records'))).toHaveLength(2);
    expect(texts.filter((text) => text.includes('20 records'))).toHaveLength(1);
    for (const text of texts) {
      expect(text).toContain('*contacts*');
      expect(text).toContain(fixture.installationId);
      expect(text).toContain(`/operations/${operationId}|operation`);
      // Never the records: no e-mail address, no field values.
      expect(text).not.toMatch(/@/);
    }
    expect(Object.keys(posts[0].json).sort()).toEqual(['text', 'unfurl_links', 'unfurl_media']);
    // The webhook's token is its path: the destination shows only the host where it describes itself.
    const listed = await stack.api('GET', `${projectPath()}/destinations/${fixture.destinationName}`);
    expect(listed.body.type).toBe('slack');
    expect(listed.body.metadata.url).toBe(`${new URL(slack.url).origin}/…`);
    expect(JSON.stringify(listed.body)).not.toContain(path);
    const listedAll = await stack.api('GET', `${projectPath()}/destinations`);
    expect(JSON.stringify(listedAll.body)).not.toContain(path);
    // The whole URL only to whoever asks for secrets.
    const opened = await stack.api(
      'GET',
      `${projectPath()}/destinations/${fixture.destinationName}?includeSecrets=true`,
    );
    expect(opened.body.metadata.url).toBe(`${slack.url}${path}`);
  });

  it('gets notifications through topics like any destination', async () => {
    const path = `/services/T1/B1/${randomUUID()}`;
    const created = await stack.api('POST', `${projectPath()}/destinations`, {
      body: {
        name: `slack-${randomUUID().slice(0, 8)}`,
        type: 'slack',
        metadata: { url: `${slack.url}${path}` },
      },
    });
    expect(created.status).toBe(201);
    const topic = await stack.api('POST', `${projectPath()}/topics`, {
      body: { name: `t-${randomUUID().slice(0, 8)}` },
    });
    expect(topic.status).toBe(201);
    expect(
      (
        await stack.api('POST', `${projectPath()}/notification-event-topic-routes`, {
          body: { eventType: 'connection.created', topicId: topic.body.id },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await stack.api('POST', `${projectPath()}/topic-destination-routes`, {
          body: { topicId: topic.body.id, destinationId: created.body.id },
        })
      ).status,
    ).toBe(201);
    const connectionId = randomUUID();
    await transaction(async (em) =>
      recordEvent(em, stack.project.id, 'connection.created', { projectId: stack.project.id, connectionId }),
    );
    const [post] = await slack.waitFor(path, 1, 30_000);
    expect(post.json.text).toContain('*connection.created*');
  });

  it('refuses a URL that is not http(s), and a secret it does not have', async () => {
    const post = (body: Record<string, unknown>) =>
      stack.api('POST', `${projectPath()}/destinations`, {
        body: { name: `slack-${randomUUID().slice(0, 8)}`, type: 'slack', ...body },
      });
    const bad = await post({ metadata: { url: 'ftp://hooks.example' } });
    expect(bad.status).toBe(400);
    expect(bad.body.issues.map((issue: { name: string }) => issue.name)).toEqual(['metadata.url']);
    const secret = await post({
      metadata: { url: 'https://hooks.example/x' },
      secrets: { webhookSigningKey: 'k' },
    });
    expect(secret.status).toBe(400);
    expect(secret.body.issues.map((issue: { name: string }) => issue.name)).toEqual([
      'secrets.webhookSigningKey',
    ]);
  });
});
