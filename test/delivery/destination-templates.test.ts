import { describe, expect, it } from '@jest/globals';
import { fillTemplate, templateProblem } from '../../src/delivery/types/template.js';
import { slackSummary } from '../../src/delivery/types/slack.js';

/** Routing-key and subject templates, and the Slack summary: built from a message's identifiers only. */

const message = JSON.stringify({
  action: 'read',
  objectName: 'deal.line items',
  provider: 'hubspot',
  installationId: 'i-1',
  projectId: 'p-1',
  operationId: 'op-123456789',
  readType: 'triggered',
  resultInfo: { type: 'inline', numRecords: 2 },
  result: [
    { fields: { email: 'ada@example.com' }, mappedFields: {}, raw: { id: '1' } },
    { id: '2', deleted: true, fields: {}, mappedFields: {}, raw: {} },
  ],
});

describe('templates', () => {
  it('fills {field} from the message, cleaning values and marking missing ones', () => {
    const dots = (value: string) => value.replace(/[.\s]/g, '_');
    expect(fillTemplate('{action}.{objectName}.{missing}', message, dots)).toBe(
      'read.deal_line_items.unknown',
    );
    expect(fillTemplate('fixed.key', 'not json')).toBe('fixed.key');
    expect(fillTemplate('{action}', 'not json')).toBe('unknown');
  });

  it('finds stray braces', () => {
    expect(templateProblem('{action}.{objectName}')).toBeUndefined();
    expect(templateProblem('{oops')).toBeDefined();
    expect(templateProblem('a}')).toBeDefined();
  });
});

describe('slack summaries', () => {
  it('say what happened, never the records', () => {
    const text = slackSummary(JSON.parse(message), 'https://ferry.example.com');
    expect(text).toContain('*deal.line items*');
    expect(text).toContain('2 records, 1 deleted');
    expect(text).toContain('`i-1`');
    expect(text).toContain(
      'https://ferry.example.com/v1/projects/p-1/operations/op-123456789|operation op-12345',
    );
    expect(text).not.toContain('ada@example.com');
  });

  it('name a notification by its type and identifiers, escaping Slack markup', () => {
    const text = slackSummary({
      notificationType: 'read.backfill.done',
      data: { installationId: 'i-<2>', objectName: 'contacts', config: { secret: 'x' } },
    });
    expect(text).toBe(
      '*Ferry* notification *read.backfill.done* · installationId `i-&lt;2&gt;` · objectName `contacts`',
    );
  });
});
