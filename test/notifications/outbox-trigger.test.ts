import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createTestProject } from '../support/stack.js';
import { closeOrm, em as newEntityManager } from '../../src/db/orm.js';
import { recordEvent } from '../../src/domain/events.js';

let listener: pg.Client;
const notifications: string[] = [];

beforeAll(async () => {
  listener = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await listener.connect();
  listener.on('notification', (message) => notifications.push(message.channel));
  await listener.query('listen ferry_events');
});
afterAll(async () => {
  await listener.end();
  await closeOrm();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the outbox wake-up', () => {
  it('notifies listeners on ferry_events when an event commits, so the relay need not wait for its poll', async () => {
    const project = await createTestProject();
    const seen = notifications.length;
    const em = await newEntityManager();
    await em.transactional(async (tx) => {
      recordEvent(tx, project.id, 'installation.deleted', { installationId: randomUUID() });
    });
    for (let waited = 0; notifications.length === seen && waited < 5000; waited += 50) await pause(50);
    expect(notifications.slice(seen)).toContain('ferry_events');
  });
});
