import { expect, it } from '@jest/globals';
import { contentHash } from '../../../src/domain/reads/change-window.js';
import { classifyReadError } from '../../../src/domain/reads/failures.js';
import { fieldMapper } from '../../../src/delivery/record-mapping.js';
import type { Connector, ProviderRecord } from '../../../src/providers/connector.js';
import { ProviderError } from '../../../src/providers/errors.js';
import type { ConformanceFake, ConformanceObject } from './conformance.js';
import { ScheduledReads } from './scheduled-reads.js';

/**
 * The checks that last time's fakes, written by their declarations' authors, never made: scheduled
 * reads across window edges at the provider's precision, changes the provider shows late, runs of
 * equal times longer than a page, deletions, the names fields go by, the provider's largest page,
 * a long Retry-After, and a steady stream of changes. Each walks the provider's clock (`setClock`)
 * rather than waiting, and reads as the pipeline does (`ScheduledReads`).
 */

export interface FidelityContext {
  name: string;
  object: ConformanceObject;
  fake: () => ConformanceFake;
  connector: () => Connector;
  /** A small page size the object's listing takes. */
  smallPage: number;
  /** A day of the provider's clock no other check uses (ms). */
  day: (index: number) => number;
  /** The object is read whole (`read.fullRead`): it has no window whose edges to check. */
  fullRead: boolean;
  /** Changes come only from a feed and records carry no modification time: no window edges to check. */
  untimed?: boolean;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Runs `check` with the provider's clock at `now()`, then gives the fake its own clock back. */
async function withClock(fake: ConformanceFake, check: (clock: { now: number }) => Promise<void>) {
  const clock = { now: 0 };
  fake.setClock(() => clock.now);
  try {
    await check(clock);
  } finally {
    fake.setClock(() => Date.now());
  }
}

/** How many times each record was delivered at or after `from`, by id. */
function deliveriesSince(delivered: readonly ProviderRecord[], ids: readonly string[], from: number) {
  return ids.map(
    (id) =>
      delivered.filter(
        (record) =>
          record.id === id && record.updatedAt !== undefined && Date.parse(record.updatedAt) >= from,
      ).length,
  );
}

/** Every version delivered once: no id, time and content twice. */
function expectNoVersionTwice(delivered: readonly ProviderRecord[]): void {
  const versions = delivered.map((record) => `${record.id}@${record.updatedAt}#${contentHash(record)}`);
  const twice = versions.filter((version, index) => versions.indexOf(version) !== index);
  expect(twice).toEqual([]);
}

export function fidelityChecks(context: FidelityContext): void {
  const { name, object } = context;

  it('asks the provider for the largest page it allows', async () => {
    const fake = context.fake();
    const before = fake.requests.length;
    await context.connector().readPage({ objectName: name });
    await context.connector().readPage({ objectName: name, since: new Date(context.day(0)) });
    const listings = fake.requests
      .slice(before)
      .flatMap((request) => (request.listing ? [request.listing] : []));
    expect(listings.length).toBeGreaterThan(0);
    for (const listing of listings) expect(listing).toMatchObject({ pageSize: listing.maxPageSize });
  });

  // A full read has no window: it is checked for what it delivers instead.
  if (context.fullRead) {
    it('delivers on a full read what changed since the last, each once, and what went as inferred deletions', async () => {
      const fake = context.fake();
      await withClock(fake, async (clock) => {
        const t = context.day(1);
        const reads = new ScheduledReads(context.connector, name, t - HOUR, context.smallPage);
        const ids = fake.seed(
          name,
          Array.from({ length: context.smallPage * 3 }, (_, i) => t - 10 * MINUTE + i * SECOND),
        );
        clock.now = t;
        await reads.read(clock.now);
        const before = reads.delivered.length;
        fake.touch(name, ids[1], t + SECOND);
        fake.touch(name, ids[ids.length - 1], t + 2 * SECOND);
        fake.remove(name, ids[2], t + 3 * SECOND);
        const [created] = fake.seed(name, [t + 4 * SECOND]);
        clock.now = t + MINUTE;
        const read = await reads.read(clock.now);
        expect(
          read
            .filter((record) => !record.deleted)
            .map((record) => record.id)
            .sort(),
        ).toEqual([ids[1], ids[ids.length - 1], created].sort());
        expect(read.filter((record) => record.deleted).map((record) => record.id)).toEqual([ids[2]]);
        expect(await reads.read(clock.now + HOUR)).toEqual([]);
        expect(reads.delivered.length - before).toBe(4);
      });
    });
  } else if (!context.untimed) {
    it('delivers once each change stamped in the second a read ends and the next begins', async () => {
      const fake = context.fake();
      await withClock(fake, async (clock) => {
        const t = context.day(1);
        const reads = new ScheduledReads(context.connector, name, t - HOUR);
        const [a, b, untouched] = fake.seed(name, [t - 10 * MINUTE, t - 10 * MINUTE, t - 10 * MINUTE]);
        clock.now = t - SECOND;
        await reads.read(clock.now);
        fake.touch(name, a, t + 100);
        clock.now = t + 500;
        await reads.read(clock.now);
        fake.touch(name, b, t + 800);
        clock.now = t + 1500;
        await reads.read(clock.now);
        clock.now = t + HOUR;
        await reads.read(clock.now);
        await reads.read(clock.now + HOUR);
        expect(deliveriesSince(reads.delivered, [a, b, untouched], t)).toEqual([1, 1, 0]);
        expectNoVersionTwice(reads.delivered);
      });
    });

    it('delivers once a change stamped at the very end of a window', async () => {
      const fake = context.fake();
      await withClock(fake, async (clock) => {
        const t = context.day(2);
        const reads = new ScheduledReads(context.connector, name, t - HOUR);
        const [record] = fake.seed(name, [t - 10 * MINUTE]);
        clock.now = t - SECOND;
        await reads.read(clock.now);
        fake.touch(name, record, t);
        clock.now = t;
        await reads.read(clock.now);
        clock.now = t + HOUR;
        await reads.read(clock.now);
        expect(deliveriesSince(reads.delivered, [record], t)).toEqual([1]);
      });
    });

    it('delivers a change the provider shows only after the read that ran first', async () => {
      const fake = context.fake();
      await withClock(fake, async (clock) => {
        const t = context.day(3);
        const reads = new ScheduledReads(context.connector, name, t - HOUR);
        const [lagging, late] = fake.seed(name, [t - 10 * MINUTE, t - 10 * MINUTE]);
        clock.now = t - SECOND;
        await reads.read(clock.now);
        // One shown when the provider's documented lag says, and one committed two seconds after
        // its stamp, while a newer change was already shown and read.
        fake.touch(name, late, t + 500, { visibleFromMs: t + 2500 });
        fake.touch(name, lagging, t + 1000);
        clock.now = t + 1500;
        await reads.read(clock.now);
        clock.now = t + HOUR;
        await reads.read(clock.now);
        await reads.read(clock.now + HOUR);
        expect(deliveriesSince(reads.delivered, [lagging, late], t)).toEqual([1, 1]);
      });
    });

    it('delivers once each of more records sharing one time than a page holds', async () => {
      const fake = context.fake();
      await withClock(fake, async (clock) => {
        const t = context.day(4);
        const ids = fake.seed(
          name,
          Array.from({ length: context.smallPage * 2 + 1 }, () => t),
        );
        const reads = new ScheduledReads(context.connector, name, t - MINUTE, context.smallPage);
        clock.now = t + HOUR;
        await reads.read(clock.now);
        await reads.read(clock.now + HOUR);
        expect(deliveriesSince(reads.delivered, ids, t)).toEqual(ids.map(() => 1));
      });
    });
  }

  if (object.revealsDeletions !== undefined) {
    it(
      object.revealsDeletions
        ? 'delivers a deletion, once, marked deleted with the record’s id'
        : 'says the provider reveals no deletions, as its reference says',
      async () => {
        const tracking = context.connector().changeTracking(name);
        if (!object.revealsDeletions) {
          expect(tracking.deletions).toBe('none');
          return;
        }
        // A full read infers deletions from complete walks, whatever the provider reveals.
        if (!tracking.fullRead) expect(tracking.deletions).not.toBe('none');
        const fake = context.fake();
        await withClock(fake, async (clock) => {
          const t = context.day(5);
          const reads = new ScheduledReads(context.connector, name, t - HOUR);
          const [gone, kept] = fake.seed(name, [t - 10 * MINUTE, t - 10 * MINUTE]);
          clock.now = t - SECOND;
          await reads.read(clock.now);
          fake.remove(name, gone, t);
          clock.now = t + HOUR;
          const read = await reads.read(clock.now);
          await reads.read(clock.now + HOUR);
          expect(read.filter((record) => record.deleted).map((record) => record.id)).toEqual([gone]);
          expect(reads.delivered.filter((record) => record.deleted).map((record) => record.id)).toEqual([
            gone,
          ]);
          expect(reads.delivered.some((record) => record.id === kept && record.deleted)).toBe(false);
        });
      },
    );
  }

  if (object.metadata) {
    it('gives every field its metadata lists under that name in records', async () => {
      const fake = context.fake();
      const metadata = await context.connector().listObjectMetadata(name);
      await withClock(fake, async (clock) => {
        const t = context.day(6);
        const [id] = fake.seed(name, [t]);
        clock.now = t + HOUR;
        const reads = new ScheduledReads(context.connector, name, t - MINUTE);
        const record = (await reads.read(clock.now)).find((found) => found.id === id);
        expect(record).toBeDefined();
        const skipped = new Set(object.roundTrip?.notInRecords ?? []);
        const names = Object.keys(metadata.fields).filter((field) => !skipped.has(field));
        const mapped = fieldMapper({
          selectedFields: Object.fromEntries(names.map((field) => [field, true])),
        })(record!.raw, record!.values);
        const missing = names.filter((field) => !Object.hasOwn(mapped.fields, field.toLowerCase()));
        expect(missing).toEqual([]);
      });
    });
  }

  if (object.metadata && object.write) {
    const write = object.write;
    it('writes every writable text field by the name its metadata lists', async () => {
      const metadata = await context.connector().listObjectMetadata(name);
      const skipped = new Set(object.roundTrip?.notWritable ?? []);
      const tag = Math.random().toString(36).slice(2, 8);
      const writable = Object.values(metadata.fields).filter(
        (field) =>
          field.valueType === 'string' &&
          !field.readOnly &&
          !field.createOnly &&
          !field.values?.length &&
          !skipped.has(field.fieldName),
      );
      const values = Object.fromEntries(
        writable.map((field, index) => [field.fieldName, textFor(field.fieldName, `rt${index}x${tag}`)]),
      );
      // Unique values (an address) are made unique again: the spec's own create may have taken them.
      const create = Object.fromEntries(
        Object.entries(write.create).map(([key, value]) => [
          key,
          typeof value === 'string' && /e-?mail/i.test(key) ? `${tag}-${value}` : value,
        ]),
      );
      const created = await context.connector().write({ objectName: name, type: 'create', record: create });
      await context
        .connector()
        .write({ objectName: name, type: 'update', recordId: created.recordId, record: values });
      const stored = JSON.stringify(context.fake().stored(name, created.recordId));
      const dropped = writable
        .map((field, index) => ({ field: field.fieldName, marker: `rt${index}x${tag}` }))
        .filter(({ marker }) => !stored.includes(marker))
        .map(({ field }) => field);
      expect(dropped).toEqual([]);
    });
  }

  it('delivers every change of a steady stream once, and every deletion', async () => {
    const fake = context.fake();
    const tracking = context.connector().changeTracking(name);
    const deletes =
      object.revealsDeletions === true && (tracking.deletions !== 'none' || tracking.fullRead === true);
    const firstRequest = fake.requests.length;
    await withClock(fake, async (clock) => {
      const t = context.day(7);
      const live = fake.seed(
        name,
        Array.from({ length: 12 }, (_, i) => t - HOUR + i * SECOND),
      );
      // `mark`: how many versions were delivered when the record last changed (a full read's records
      // carry no time); `bornAfter`: the read before the record was created; `unread`: created and
      // deleted between two reads, which a full read never sees.
      const last = new Map<
        string,
        { at: number; deleted: boolean; mark: number; bornAfter?: number; unread?: boolean }
      >(live.map((id) => [id, { at: 0, deleted: false, mark: 0 }]));
      // As an installation reads, its selected field only: a provider that fetches values per record
      // (ActiveCampaign's custom values, five calls a second) would otherwise spend minutes here.
      const selected = object.fields && [object.fields.selected];
      const reads = new ScheduledReads(context.connector, name, t - 2 * HOUR, undefined, selected);
      clock.now = t;
      await reads.read(clock.now);
      let random = 7;
      const next = () => (random = (random * 48271) % 2147483647) / 2147483647;
      let lastRead = t;
      for (let at = t + 500; at <= t + 3 * MINUTE; at += 500) {
        clock.now = at;
        // A burst: several changes in one second, to different records.
        const changes = next() < 0.2 ? 3 : 1;
        for (let change = 0; change < changes; change++) {
          const roll = next();
          const ids = [...last].filter(([, state]) => !state.deleted).map(([id]) => id);
          if (roll < 0.15 || !ids.length) {
            const [id] = fake.seed(name, [at]);
            last.set(id, { at, deleted: false, mark: reads.delivered.length, bornAfter: lastRead });
          } else if (deletes && roll < 0.25) {
            const id = ids[Math.floor(next() * ids.length)];
            fake.remove(name, id, at);
            const unread = last.get(id)!.bornAfter === lastRead;
            last.set(id, { ...last.get(id)!, at, deleted: true, mark: reads.delivered.length, unread });
          } else {
            const id = ids[Math.floor(next() * ids.length)];
            fake.touch(name, id, at);
            last.set(id, { ...last.get(id)!, at, deleted: false, mark: reads.delivered.length });
          }
        }
        if (at - lastRead >= MINUTE) {
          await reads.read(at);
          lastRead = at;
        }
      }
      clock.now = t + 3 * MINUTE + HOUR;
      await reads.read(clock.now);
      await reads.read(clock.now + HOUR);
      expectNoVersionTwice(reads.delivered);
      const lost = [...last]
        .filter(([, state]) => state.at > 0)
        .filter(([id, state]) => {
          const versions = reads.delivered.filter((record) => record.id === id);
          const latest = versions.at(-1);
          // A full read never saw a record made and deleted between two reads: nothing to tell.
          if (!latest) return !(tracking.fullRead && state.unread);
          if (state.deleted) return !latest.deleted;
          if (tracking.fullRead || context.untimed) return reads.delivered.lastIndexOf(latest) < state.mark;
          // Compared at the provider's precision: it keeps no finer time.
          const unit = tracking.precisionMs;
          return Date.parse(latest.updatedAt!) < Math.floor(state.at / unit) * unit;
        })
        .map(([id]) => id);
      expect(lost).toEqual([]);
    });
    // Reads keep to the limits the provider documents (the fakes enforce them): under 5 % of the
    // calls answered 429.
    const calls = fake.requests.slice(firstRequest).filter((request) => !request.injected);
    const limited = calls.filter((request) => request.status === 429).length;
    expect({ calls: calls.length, limited: limited / calls.length < 0.05 }).toEqual({
      calls: calls.length,
      limited: true,
    });
  });
}

/** A value a text field of this name takes: an address, a phone number, a URL, or plain text. */
function textFor(field: string, marker: string): string {
  if (/e-?mail/i.test(field)) return `${marker}@example.com`;
  if (/phone|mobile|fax/i.test(field)) return `+1 555 0100 ${marker}`;
  if (/url|website|domain|link/i.test(field)) return `https://example.com/${marker}`;
  return marker;
}

/** The long Retry-After check, once per provider. */
export function retryAfterCheck(context: {
  first: string;
  fake: () => ConformanceFake;
  connector: () => Connector;
}) {
  it('does not wait out a long Retry-After in place: it fails the call, retryable after that wait', async () => {
    const fake = context.fake();
    fake.failNext(1, 429, { 'retry-after': '120' });
    const before = fake.requests.length;
    const error = await context
      .connector()
      .readPage({ objectName: context.first })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(fake.requests.length - before).toBe(1);
    expect((error as ProviderError).retryable).toBe(true);
    expect((error as ProviderError).retryAfterSeconds).toBeGreaterThanOrEqual(120);
    expect(classifyReadError(error, HOUR).waitMs).toBeGreaterThanOrEqual(120_000);
  });
}
