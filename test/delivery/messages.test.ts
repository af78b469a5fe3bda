import {
  buildNotification,
  buildResultMessage,
  MAX_MESSAGE_BYTES,
  messageIdFor,
  MessageTooLargeError,
  notificationMessageId,
  splitIntoMessages,
  type ReadMessageContext,
  type ResultEntry,
} from '../../src/delivery/messages.js';

const context: ReadMessageContext = {
  action: 'read',
  projectId: 'proj-1',
  provider: 'salesforce',
  workspace: 'acme',
  groupRef: 'group-1',
  groupName: 'Acme Inc',
  consumerRef: 'user-1',
  consumerName: 'Ada',
  installationId: 'inst-1',
  installationUpdateTime: '2026-01-01T00:00:00.000Z',
  objectName: 'contact',
  rawObjectName: 'Contact',
  operationId: 'op-1',
  operationTime: '2026-01-02T03:04:05.000Z',
  readType: 'scheduled',
};

/** An entry of roughly `bytes` bytes, with multi-byte characters so bytes and characters differ. */
function entry(index: number, bytes = 200): ResultEntry {
  const name = `Ünïcode-${index}-`.padEnd(Math.max(bytes / 2, 10), 'é');
  return {
    fields: { id: String(index), name },
    mappedFields: { fullName: name },
    raw: { Id: String(index), Name: name },
  };
}

describe('buildResultMessage', () => {
  it('lays out the documented body, keys in order', () => {
    const entries = [entry(1)];
    const message = buildResultMessage(context, entries);
    expect(Object.keys(message)).toEqual([
      'action',
      'projectId',
      'provider',
      'workspace',
      'groupRef',
      'groupName',
      'consumerRef',
      'consumerName',
      'installationId',
      'installationUpdateTime',
      'objectName',
      'rawObjectName',
      'operationId',
      'operationTime',
      'readType',
      'resultInfo',
      'result',
    ]);
    expect(message.resultInfo).toEqual({ type: 'inline', numRecords: 1 });
    expect(message.result).toBe(entries);
  });

  it('leaves out workspace, operationId and readType when absent (subscribe messages)', () => {
    const { workspace: _w, operationId: _o, readType: _r, ...rest } = context;
    const message = buildResultMessage({ ...rest, action: 'subscribe' }, []);
    expect(message).not.toHaveProperty('workspace');
    expect(message).not.toHaveProperty('operationId');
    expect(message).not.toHaveProperty('readType');
    expect(message.action).toBe('subscribe');
  });
});

describe('splitIntoMessages', () => {
  it('keeps a page that fits in one message of at most pageSize records', () => {
    const entries = Array.from({ length: 10 }, (_, index) => entry(index));
    const parts = splitIntoMessages(context, entries, 50);
    expect(parts).toHaveLength(1);
    expect(parts[0]).toEqual({
      partIndex: 0,
      numRecords: 10,
      body: Buffer.from(JSON.stringify(buildResultMessage(context, entries))),
    });
  });

  it('splits by pageSize', () => {
    const entries = Array.from({ length: 120 }, (_, index) => entry(index));
    const parts = splitIntoMessages(context, entries, 50);
    expect(parts.map((part) => part.numRecords)).toEqual([50, 50, 20]);
    expect(parts.map((part) => part.partIndex)).toEqual([0, 1, 2]);
  });

  it('splits further so every message stays within the byte limit, keeping order and every record', () => {
    const entries = Array.from({ length: 500 }, (_, index) => entry(index, 1000 + (index % 7) * 1500));
    const parts = splitIntoMessages(context, entries, 500);
    expect(parts.length).toBeGreaterThan(1);
    const delivered: ResultEntry[] = [];
    for (const part of parts) {
      expect(part.body.length).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
      const text = part.body.toString('utf8');
      const parsed = JSON.parse(text) as ReturnType<typeof buildResultMessage>;
      expect(parsed.resultInfo).toEqual({ type: 'inline', numRecords: part.numRecords });
      expect(text).toBe(JSON.stringify(buildResultMessage(context, parsed.result)));
      delivered.push(...parsed.result);
    }
    expect(delivered).toEqual(entries);
  });

  it('fills messages up to the limit exactly', () => {
    const entries = Array.from({ length: 40 }, (_, index) => entry(index, 300));
    const single = Buffer.byteLength(JSON.stringify(buildResultMessage(context, entries.slice(0, 3))));
    const parts = splitIntoMessages(context, entries, 500, single);
    expect(parts[0].numRecords).toBe(3);
    expect(Buffer.byteLength(parts[0].body)).toBe(single);
    for (const part of parts) expect(Buffer.byteLength(part.body)).toBeLessThanOrEqual(single);
  });

  it('refuses a record too large to deliver even alone, naming it', () => {
    const entries = [entry(0), entry(1, 400 * 1024), entry(2)];
    expect(() => splitIntoMessages(context, entries, 100)).toThrow(MessageTooLargeError);
    try {
      splitIntoMessages(context, entries, 100);
    } catch (error) {
      expect(error).toMatchObject({ recordIndex: 1, maxBytes: MAX_MESSAGE_BYTES });
      expect((error as MessageTooLargeError).messageBytes).toBeGreaterThan(MAX_MESSAGE_BYTES);
    }
  });

  it('makes no message for an empty page', () => {
    expect(splitIntoMessages(context, [], 100)).toEqual([]);
  });
});

describe('message ids', () => {
  it('are stable for the same operation, page and part, so a re-delivered page keeps its ids', () => {
    expect(messageIdFor('op-1', 3, 0)).toBe(messageIdFor('op-1', 3, 0));
    expect(messageIdFor('op-1', 3, 0)).toMatch(/^msg_[A-Za-z0-9_-]{24}$/);
  });

  it('differ between operations, pages and parts', () => {
    const ids = new Set<string>();
    for (const operationId of ['op-1', 'op-2']) {
      for (let page = 0; page < 20; page++)
        for (let part = 0; part < 5; part++) ids.add(messageIdFor(operationId, page, part));
    }
    expect(ids.size).toBe(2 * 20 * 5);
    expect(messageIdFor('op-1', 1, 11)).not.toBe(messageIdFor('op-1', 11, 1));
    expect(notificationMessageId('evt-1')).not.toBe(notificationMessageId('evt-2'));
    expect(notificationMessageId('evt-1')).toBe(notificationMessageId('evt-1'));
  });
});

describe('buildNotification', () => {
  it('wraps the event as {notificationType, data}', () => {
    const data = {
      projectId: 'proj-1',
      destinationId: 'd-1',
      destinationName: 'main',
      url: 'https://example.com/hook',
    };
    expect(JSON.stringify(buildNotification('destination.webhook.disabled', data))).toBe(
      JSON.stringify({ notificationType: 'destination.webhook.disabled', data }),
    );
  });
});
