import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startFakeGoogle } from './fakes/google.js';
import type { ConformanceFake } from './kit/conformance.js';

/**
 * The Gmail half of the Google fake, spoken to as a client would (no declaration involved): stubs
 * listed newest first, the search dates, every change written to history under increasing ids,
 * deletions only as `messagesDeleted`, and a start older than the history kept answering 404, after
 * which a client syncs in full (https://developers.google.com/workspace/gmail/api/guides/sync).
 */

type Json = Record<string, any>;

const DAY = 86_400_000;
let fake: ConformanceFake;
let clock = Date.UTC(2026, 9, 1);

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const response = await fetch(`${fake.url}/gmail/v1/users/me${path}`, {
    method,
    headers: { authorization: `Bearer ${fake.credential}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as Json) : {} };
}
const get = async (path: string) => {
  const { status, json } = await call('GET', path);
  expect(status).toBe(200);
  return json;
};
const raw = (subject: string) =>
  Buffer.from(
    `From: a@example.com\r\nTo: ada@example.com\r\nSubject: ${subject}\r\n\r\nHello ${subject}`,
  ).toString('base64url');

beforeAll(async () => {
  fake = await startFakeGoogle({ gmailHistoryKeptMs: 2 * DAY });
  fake.setClock(() => clock);
});
afterAll(async () => {
  await fake?.stop();
});

describe('Gmail messages (fake)', () => {
  it('lists stubs newest first across pages, filtered by after:/before: in seconds and dates', async () => {
    const base = Date.UTC(2026, 8, 1, 12);
    const ids = fake.seed('messages', [base, base + 1000, base + 2000, base + DAY]);
    const first = await get('/messages?maxResults=2');
    expect(first.messages).toEqual([
      { id: ids[3], threadId: ids[3] },
      { id: ids[2], threadId: ids[2] },
    ]);
    const second = await get(`/messages?maxResults=2&pageToken=${first.nextPageToken}`);
    expect(second.messages.map((m: Json) => m.id)).toEqual([ids[1], ids[0]]);
    expect(second.nextPageToken).toBeUndefined();
    const window = await get(
      `/messages?q=${encodeURIComponent(`after:${(base + 1000) / 1000} before:${(base + 2000) / 1000}`)}`,
    );
    expect(window.messages.map((m: Json) => m.id)).toEqual([ids[1]]);
    // A date is midnight PST (08:00 UTC): 2026/09/01 12:00 UTC is after 2026/09/01.
    const dated = await get(`/messages?q=${encodeURIComponent('after:2026/09/01 before:2026/09/02')}`);
    expect(dated.messages.map((m: Json) => m.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(dated.resultSizeEstimate).toBe(3);
  });

  it('gets a message in each format, with string historyId and internalDate', async () => {
    const [id] = fake.seed('messages', [Date.UTC(2026, 8, 2)]);
    const full = await get(`/messages/${id}`);
    expect(full).toMatchObject({
      id,
      internalDate: String(Date.UTC(2026, 8, 2)),
      labelIds: ['INBOX', 'UNREAD'],
    });
    expect(full.historyId).toMatch(/^\d+$/);
    expect(full.payload.headers.length).toBeGreaterThan(3);
    const minimal = await get(`/messages/${id}?format=minimal`);
    expect(minimal.payload).toBeUndefined();
    expect(minimal.snippet).toBeTruthy();
    const metadata = await get(`/messages/${id}?format=metadata&metadataHeaders=Subject`);
    expect(metadata.payload.headers.map((h: Json) => h.name)).toEqual(['Subject']);
    const rawForm = await get(`/messages/${id}?format=raw`);
    expect(Buffer.from(rawForm.raw, 'base64url').toString()).toContain('Subject:');
    expect((await call('GET', '/messages/ffff')).status).toBe(404);
  });

  it('writes every change to history: insert, labels, trash, delete; ids increase', async () => {
    const start = (await get('/profile')).historyId;
    const inserted = await call('POST', '/messages', { raw: raw('one'), labelIds: ['INBOX'] });
    expect(inserted.status).toBe(200);
    const id = inserted.json.id;
    await call('POST', `/messages/${id}/modify`, { addLabelIds: ['STARRED'], removeLabelIds: ['INBOX'] });
    await call('POST', `/messages/${id}/trash`);
    expect((await get('/messages?maxResults=500')).messages.some((m: Json) => m.id === id)).toBe(false);
    await call('POST', `/messages/${id}/untrash`);
    expect((await call('DELETE', `/messages/${id}`)).status).toBe(204);
    expect((await call('GET', `/messages/${id}`)).status).toBe(404);
    expect((await call('POST', `/messages/${id}/modify`, { addLabelIds: ['STARRED'] })).status).toBe(404);

    const changes = await get(`/history?startHistoryId=${start}`);
    const kinds = changes.history.map((record: Json) =>
      Object.keys(record).filter((key) => key !== 'id' && key !== 'messages'),
    );
    expect(kinds).toEqual([
      ['messagesAdded'],
      ['labelsAdded'],
      ['labelsRemoved'],
      ['labelsAdded'],
      ['labelsRemoved'],
      ['messagesDeleted'],
    ]);
    const historyIds = changes.history.map((record: Json) => Number(record.id));
    expect([...historyIds].sort((a, b) => a - b)).toEqual(historyIds);
    expect(Number(changes.historyId)).toBe(historyIds.at(-1));
    expect(changes.history[1].labelsAdded[0].labelIds).toEqual(['STARRED']);
    const deleted = await get(`/history?startHistoryId=${start}&historyTypes=messageDeleted`);
    expect(deleted.history.map((record: Json) => record.messagesDeleted[0].message.id)).toEqual([id]);
    const paged = await get(`/history?startHistoryId=${start}&maxResults=4`);
    expect(paged.history).toHaveLength(4);
    const rest = await get(`/history?startHistoryId=${start}&maxResults=4&pageToken=${paged.nextPageToken}`);
    expect(rest.history).toHaveLength(2);
    expect(rest.nextPageToken).toBeUndefined();
  });

  it('commits a change stamped ahead of the clock when the clock reaches it', async () => {
    const start = (await get('/profile')).historyId;
    const [id] = fake.seed('messages', [clock + 5000]);
    expect((await call('GET', `/messages/${id}`)).status).toBe(404);
    expect((await get(`/history?startHistoryId=${start}`)).history).toBeUndefined();
    clock += 5000;
    expect((await get(`/history?startHistoryId=${start}`)).history[0].messagesAdded[0].message.id).toBe(id);
  });

  it('answers 404 for a startHistoryId older than the history kept, and 400 without one', async () => {
    const old = (await get('/profile')).historyId;
    await call('POST', '/messages', { raw: raw('two') });
    clock += 3 * DAY;
    await call('POST', '/messages', { raw: raw('three') });
    const stale = await call('GET', `/history?startHistoryId=${old}`);
    expect(stale.status).toBe(404);
    expect(stale.json.error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
    const current = (await get('/profile')).historyId;
    expect((await get(`/history?startHistoryId=${current}`)).history).toBeUndefined();
    expect((await call('GET', '/history')).status).toBe(400);
  });

  it('refuses an unknown label, and has no update or patch of a message', async () => {
    const bad = await call('POST', '/messages', { raw: raw('four'), labelIds: ['NOPE'] });
    expect(bad.status).toBe(400);
    expect(bad.json.error.errors[0].message).toBe('Invalid label: NOPE');
    const { json } = await call('POST', '/messages', { raw: raw('five') });
    expect((await call('PATCH', `/messages/${json.id}`, { labelIds: [] })).status).toBe(404);
    expect((await call('PUT', `/messages/${json.id}`, { labelIds: [] })).status).toBe(404);
  });
});
