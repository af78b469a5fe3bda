import { describe, expect, it } from '@jest/globals';
import { readWebhookEvents } from '../../src/providers/declarative/webhooks.js';
import type { WebhooksDeclaration } from '../../src/schemas/connector-declaration.js';

/**
 * Which fields an update changed, when the provider lists them as objects (Jira's changelog items,
 * each naming its field by `fieldId`): each item's name, once, in order.
 */

const webhooks = {
  signature: { scheme: 'jwt' },
  event: {
    type: ['/webhookEvent'],
    recordId: '/issue/id',
    record: '/issue',
    fieldsUpdated: { pointer: '/changelog/items', as: 'list', each: '/fieldId' },
  },
  objects: { issues: { update: 'jira:issue_updated' } },
} as unknown as WebhooksDeclaration;

const read = (event: unknown) => readWebhookEvents('acme', webhooks, Buffer.from(JSON.stringify(event)), {});

describe('fields updated as a list of objects', () => {
  it('names each changed field once, by the pointer into each item', () => {
    const [updated] = read({
      webhookEvent: 'jira:issue_updated',
      issue: { id: '10001', fields: { summary: 'New' } },
      changelog: {
        items: [
          { field: 'summary', fieldId: 'summary', fromString: 'Old', toString: 'New' },
          { field: 'Story Points', fieldId: 'customfield_10016', fromString: '3', toString: '5' },
          { field: 'summary', fieldId: 'summary', fromString: 'New', toString: 'Newer' },
          { field: 'Link' },
        ],
      },
    });
    expect(updated).toMatchObject({ eventType: 'update', recordId: '10001' });
    expect(updated.fieldsUpdated).toEqual(['summary', 'customfield_10016']);
  });

  it('says nothing of changed fields when the event lists none', () => {
    const [updated] = read({ webhookEvent: 'jira:issue_updated', issue: { id: '10001' } });
    expect(updated).not.toHaveProperty('fieldsUpdated');
  });
});
