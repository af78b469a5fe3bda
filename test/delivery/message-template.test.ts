import { describe, expect, it } from '@jest/globals';
import {
  evaluateTemplate,
  TemplateError,
  templateProblem,
} from '../../src/delivery/types/message-template.js';
import { defaultObjectKey } from '../../src/delivery/types/s3.js';
import { messageGroup, queueName, queueRegion } from '../../src/delivery/types/sqs.js';

/** The pure parts of the AWS types: JMESPath templates, S3's default key, SQS's URL reading. */

const message = {
  installationId: 'inst_1',
  objectName: 'contacts',
  resultInfo: { numRecords: 3 },
  result: [],
};

describe('message templates', () => {
  it('see the message and its id, and give text', () => {
    expect(evaluateTemplate("join('/', [installationId, objectName, messageId])", message, 'msg_1')).toBe(
      'inst_1/contacts/msg_1',
    );
    expect(evaluateTemplate('resultInfo.numRecords', message, 'msg_1')).toBe('3');
  });

  it('refuse a value that is no key: null, an object, a list, an empty string', () => {
    for (const [expression, kind] of [
      ['missing', 'null'],
      ['resultInfo', 'an object'],
      ['result', 'a list'],
      ["''", 'an empty string'],
    ]) {
      expect(() => evaluateTemplate(expression, message, 'msg_1')).toThrow(
        new TemplateError(`the template gave ${kind}, not text`),
      );
    }
  });

  it('name what is wrong with an expression before it is stored', () => {
    expect(templateProblem('installationId')).toBeUndefined();
    expect(templateProblem('a..b')).toMatch(/^not a JMESPath expression/);
    expect(templateProblem('shout(objectName)')).toBe('calls unknown JMESPath function shout()');
  });
});

describe('AWS names', () => {
  it('key an object by its time then its id, or by id alone without a time', () => {
    expect(defaultObjectKey('msg_1', new Date('2026-01-02T03:04:05.678Z'))).toBe(
      '2026/01/02/030405-msg_1.json',
    );
    expect(defaultObjectKey('msg_1', undefined)).toBe('messages/msg_1.json');
  });

  it('read a queue URL: its name, its region, its FIFO group', () => {
    expect(queueName('https://sqs.eu-west-2.amazonaws.com/123456789012/orders.fifo')).toBe('orders.fifo');
    expect(queueName('https://sqs.eu-west-2.amazonaws.com/orders')).toBeUndefined();
    expect(queueName('ftp://sqs.eu-west-2.amazonaws.com/1/orders')).toBeUndefined();
    expect(queueRegion({ queueUrl: 'https://sqs.eu-west-2.amazonaws.com/1/q' })).toBe('eu-west-2');
    expect(queueRegion({ queueUrl: 'https://sqs.eu-west-2.amazonaws.com/1/q', region: 'us-west-1' })).toBe(
      'us-west-1',
    );
    expect(queueRegion({ queueUrl: 'http://127.0.0.1:5000/1/q' })).toBe('us-east-1');
    expect(messageGroup(JSON.stringify(message))).toBe('inst_1:contacts');
    expect(
      messageGroup(JSON.stringify({ notificationType: 'read.backfill.done', data: { installationId: 'i' } })),
    ).toBe('i:read.backfill.done');
  });
});
