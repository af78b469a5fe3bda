import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../../src/config.js';
import type { AuthMaterial, ConnectionTarget } from '../../../src/providers/auth-material.js';
import { connectorDeclaration, getProvider } from '../../../src/providers/catalog/index.js';
import { effectiveObject } from '../../../src/providers/catalog/connector-declarations.js';
import type {
  Connector,
  ProviderRecord,
  ReadPageInput,
  SearchInput,
} from '../../../src/providers/connector.js';
import { connectorFor } from '../../../src/providers/connectors/index.js';
import { ConnectorError, ProviderError, toProblem } from '../../../src/providers/errors.js';
import type { ProblemError } from '../../../src/core/problem.js';
import type { FieldMetadata } from '../../../src/schemas/object-metadata.js';
import type { LoggedRequest } from './fake-provider.js';
import { fidelityChecks, retryAfterCheck } from './fidelity.js';
import { readAllPages } from './read-all.js';

/**
 * The conformance suite every deep connector runs: its declaration (and hooks) against a local
 * server that answers as the provider's public API reference says, reached through
 * FERRY_PROVIDER_OVERRIDES, the same mechanism a self-hoster uses for a regional instance.
 */

/**
 * What the suite asks of a provider's local server. A fake is written from the provider's public
 * reference by someone who has not read Ferry's declaration for that provider ("two hands"): it
 * answers as the provider does, including what a naive fake would not model (whole-second
 * timestamps, exclusive bounds, search indexes that lag, exports that hold back the last minute,
 * result caps, ties, deletions, long `Retry-After`, inactive fields).
 *
 * Times are the provider's clock, in milliseconds since the epoch. A fake stores every time at the
 * provider's own precision (a provider with whole-second times truncates `modifiedMs`).
 */
export interface ConformanceFake {
  /** The provider's API base URL on this server. */
  url: string;
  /** Its OAuth token endpoint, for OAuth providers (used by the pipeline test's refresh). */
  tokenUrl?: string;
  /** The credential it accepts now. */
  credential: string;
  rotateCredential(): string;
  /** OAuth providers: the token endpoint refuses the refresh token from now on (a revoked grant). */
  refuseRefresh?(): void;
  failNext(count: number, status: number, headers?: Record<string, string>): void;
  requests: LoggedRequest[];
  /**
   * The provider's clock, which decides what its listings can show now (an index that lags, an
   * export that holds back its last minute, a change committed late). Default: `Date.now`. The
   * suite sets a clock of its own to walk through time without waiting.
   */
  setClock(now: () => number): void;
  /** Adds one record per modification time (ms) and returns their ids, in order. */
  seed(object: string, modifiedTimes: number[]): string[];
  /**
   * Sets a record's modification time, as an edit at the provider would. `visibleFromMs`: the
   * change is stamped `modifiedMs` but the provider's listings show it only from then on (a
   * transaction that commits late, an index that catches up late); without it the change shows as
   * soon as the provider documents (its documented lag, or at once).
   */
  touch(object: string, id: string, modifiedMs: number, options?: { visibleFromMs?: number }): void;
  /**
   * Deletes the record at `atMs` as a user of the provider would (delete, archive, trash: what the
   * provider calls deleting), after which the provider reveals it the way its reference says (a
   * tombstone, `IsDeleted`, `archived`, a `deleted` status in an export), or not at all.
   */
  remove(object: string, id: string, atMs: number): void;
  /** The record as the provider stores it, or undefined once deleted. */
  stored(object: string, id: string): Record<string, unknown> | undefined;
  stop(): Promise<void>;
}

export interface ConformanceObject {
  name: string;
  /** A field to select, which every seeded record has, and one that selection leaves out. */
  fields?: { selected: string; other?: string };
  /** A create, then an update of it; `check` reads a stored field back. */
  write?: {
    create: Record<string, unknown>;
    update: Record<string, unknown>;
    /** The value the provider stores for the update's first field, e.g. `stored.properties.name`. */
    check(stored: Record<string, unknown>): unknown;
    /** Deletes are declared too. */
    delete?: boolean;
  };
  /** Fields the metadata must describe, with what it must say of them. */
  metadata?: Record<string, Partial<FieldMetadata>>;
  /**
   * Required when the object declares `search`: a text field the provider filters on, and how the
   * fake stores a value in it for a record, as an edit at the provider would.
   */
  search?: { field: string; set(fake: ConformanceFake, id: string, value: string): void };
  /**
   * Whether the provider reveals deleted records of this object to a read, as its reference says
   * (the fake's author knows): the suite then expects a deletion delivered, or the declaration to
   * say there is none.
   */
  revealsDeletions?: boolean;
  /** Fields the metadata lists that records never carry (write-only), and text fields writes cannot set. */
  roundTrip?: { notInRecords?: string[]; notWritable?: string[] };
}

/** A `search.set` writing into the fake's stored record itself (or its `under` member, HubSpot's `properties`). */
export function setStored(
  object: string,
  field: string,
  under?: string,
): NonNullable<ConformanceObject['search']>['set'] {
  return (fake, id, value) => {
    const stored = fake.stored(object, id)!;
    Object.assign(under ? (stored[under] as object) : stored, { [field]: value });
  };
}

export interface ConformanceSpec {
  provider: string;
  /** The public reference the fake follows (also in SOURCES.md). */
  reference: string;
  start(): Promise<ConformanceFake>;
  objects: ConformanceObject[];
  /** Connection metadata the provider's URLs need (a workspace). */
  templateVars?: Record<string, string>;
  /** How the connection's credential is presented; from the catalog's auth type when absent. */
  material?(credential: string): AuthMaterial;
}

function materialFor(provider: string, credential: string): AuthMaterial {
  const catalog = getProvider(provider)!;
  if (catalog.authType === 'oauth2') return { type: 'oauth2', accessToken: credential };
  if (catalog.authType === 'basic') return { type: 'basic', username: credential, password: '' };
  return { type: 'apiKey', apiKey: credential };
}

/**
 * FERRY_PROVIDER_OVERRIDES for a provider served by its fake: the base URL, the token URL, and the
 * base URL of each of the catalog's modules (the provider's other hosts, which the fake serves too).
 */
export function overrideFor(provider: string, fake: Pick<ConformanceFake, 'url' | 'tokenUrl'>) {
  const modules = Object.keys(getProvider(provider)?.modules ?? {});
  return {
    baseURL: fake.url,
    ...(fake.tokenUrl && { tokenURL: fake.tokenUrl }),
    ...(modules.length && { modules: Object.fromEntries(modules.map((id) => [id, { baseURL: fake.url }])) }),
  };
}

const fastRetry = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 2_000 };

export function conformance(spec: ConformanceSpec): void {
  describe(`${spec.provider} conformance`, () => {
    let fake: ConformanceFake;
    let target: ConnectionTarget;
    let credential: string;
    let refreshes = 0;
    let refreshingAuth: ConnectionTarget['auth'];
    const connector = (): Connector => connectorFor(target, { retry: fastRetry });
    const declaration = () => connectorDeclaration(spec.provider)!;

    beforeAll(async () => {
      fake = await spec.start();
      process.env.FERRY_PROVIDER_OVERRIDES = JSON.stringify({
        [spec.provider]: overrideFor(spec.provider, fake),
      });
      resetConfig();
      credential = fake.credential;
      refreshingAuth = async (options) => {
        if (options?.forceRefresh) {
          refreshes++;
          credential = fake.credential;
        }
        return spec.material?.(credential) ?? materialFor(spec.provider, credential);
      };
      target = { provider: spec.provider, templateVars: spec.templateVars ?? {}, auth: refreshingAuth };
    });

    afterAll(async () => {
      delete process.env.FERRY_PROVIDER_OVERRIDES;
      resetConfig();
      await fake?.stop();
    });

    const readAll = (input: Omit<ReadPageInput, 'pageToken'>) => readAllPages(connector(), input);

    async function searchAll(input: Omit<SearchInput, 'pageToken'>): Promise<ProviderRecord[]> {
      const records: ProviderRecord[] = [];
      let pageToken: string | undefined;
      for (let pages = 0; pages < 1000; pages++) {
        const page = await connector().search({ ...input, ...(pageToken && { pageToken }) });
        records.push(...page.records);
        if (!page.nextPageToken) return records;
        pageToken = page.nextPageToken;
      }
      throw new Error('the search never ended');
    }

    /** The smallest page size the object's listing takes, so a few records make several pages. */
    const smallPage = (object: string) => {
      const listing = effectiveObject(declaration(), object)!.read!.list;
      return Math.min(listing.pageSize.max, Math.max(listing.pageSize.min ?? 1, 3));
    };

    it('is declared, and its declaration names the reference the fake follows', () => {
      expect(declaration()).toBeDefined();
      expect(declaration().reference).toBeTruthy();
      for (const object of spec.objects) expect(effectiveObject(declaration(), object.name)).toBeDefined();
    });

    describe.each(spec.objects.map((object) => [object.name, object] as const))('%s', (name, object) => {
      const base = Date.UTC(2024, 0, 1);
      const minute = 60_000;

      it('reads every record across pages, none lost or repeated', async () => {
        const pageSize = smallPage(name);
        const ids = fake.seed(
          name,
          Array.from({ length: pageSize * 3 + 1 }, (_, i) => base + i * minute),
        );
        const read = (await readAll({ objectName: name, pageSize })).map((record) => record.id);
        const mine = read.filter((id) => ids.includes(id));
        expect(new Set(mine).size).toBe(mine.length);
        expect(mine.sort()).toEqual([...ids].sort());
      });

      const fullRead = effectiveObject(declaration(), name)?.read?.fullRead !== undefined;
      // Changes only from a feed, records with no modification time (Gmail's messages): no read from
      // a time, no window edges; deliveries are checked by their order, as a full read's are.
      const untimed =
        !fullRead &&
        effectiveObject(declaration(), name)?.read?.feed !== undefined &&
        effectiveObject(declaration(), name)?.updated === undefined;
      if (fullRead) {
        it('lists every live record on a full read, and no deleted one', async () => {
          fake.setClock(() => Date.UTC(2025, 5, 2));
          const ids = fake.seed(
            name,
            Array.from({ length: 12 }, (_, i) => Date.UTC(2025, 5, 1) + i * minute),
          );
          fake.touch(name, ids[4], Date.UTC(2025, 5, 1, 12));
          fake.remove(name, ids[7], Date.UTC(2025, 5, 1, 13));
          const read = (await readAll({ objectName: name, pageSize: smallPage(name) })).map((r) => r.id);
          expect(read.filter((id) => ids.includes(id)).sort()).toEqual(
            ids.filter((id) => id !== ids[7]).sort(),
          );
          expect(new Set(read).size).toBe(read.length);
          fake.setClock(() => Date.now());
        });
      }

      if (!fullRead && !untimed)
        it('reads exactly the records changed in [since, until)', async () => {
          const start = Date.UTC(2025, 5, 1);
          // The provider's clock a day after the window: feeds that keep a month of changes still hold it.
          fake.setClock(() => start + 86_400_000);
          const ids = fake.seed(
            name,
            Array.from({ length: 12 }, (_, i) => start + i * minute),
          );
          // An old record edited inside the window counts; one edited after it does not.
          const [old, later] = fake.seed(name, [base - 86_400_000, base - 86_400_000]);
          fake.touch(name, old, start + 5 * minute + 30_000);
          fake.touch(name, later, start + 20 * minute);
          const since = new Date(start + 3 * minute);
          const until = new Date(start + 8 * minute);
          const read = await readAll({ objectName: name, pageSize: smallPage(name), since, until });
          // A listing that resumes from the provider's cursor is never cut at `until`: the cursor moves
          // past what it lists, so what it lists must be delivered.
          const resumable = connector().changeTracking(name).resumable;
          const expected = [...ids.slice(3, 8), old];
          const readIds = read.map((record) => record.id);
          if (resumable) {
            expect(readIds.filter((id) => expected.includes(id)).sort()).toEqual(expected.sort());
            expect(readIds).not.toContain(ids[2]);
          } else {
            expect(readIds.sort()).toEqual(expected.sort());
          }
          for (const record of read) {
            const time = Date.parse(record.updatedAt!);
            expect(time).toBeGreaterThanOrEqual(since.getTime());
            if (!resumable) expect(time).toBeLessThan(until.getTime());
          }
          fake.setClock(() => Date.now());
        });

      if (object.fields) {
        const { selected, other } = object.fields;
        it(`reads chosen fields${other ? ', leaving others out' : ''}`, async () => {
          fake.seed(name, [Date.UTC(2026, 0, 1)]);
          const records = await readAll({ objectName: name, pageSize: smallPage(name), fields: [selected] });
          expect(records.length).toBeGreaterThan(0);
          const text = JSON.stringify(records.map((record) => record.raw));
          expect(text).toContain(`"${selected}"`);
          if (other) expect(text).not.toContain(`"${other}"`);
        });
      }

      if (object.write) {
        const write = object.write;
        it(`creates, updates${write.delete ? ' and deletes' : ''} a record`, async () => {
          const created = await connector().write({ objectName: name, type: 'create', record: write.create });
          expect(created.recordId).toBeTruthy();
          expect(fake.stored(name, created.recordId)).toBeDefined();
          const updated = await connector().write({
            objectName: name,
            type: 'update',
            recordId: created.recordId,
            record: write.update,
          });
          expect(updated.recordId).toBe(created.recordId);
          expect(write.check(fake.stored(name, created.recordId)!)).toEqual(Object.values(write.update)[0]);
          if (write.delete) {
            await connector().write({ objectName: name, type: 'delete', recordId: created.recordId });
            expect(fake.stored(name, created.recordId)).toBeUndefined();
          }
        });
      }

      // A fake committed before its declaration still collects (its run then fails as undeclared).
      if (connectorDeclaration(spec.provider) && effectiveObject(declaration(), name)?.search) {
        it('searches by equality: matches found across pages, others left out, an unknown field refused', async () => {
          expect(object.search).toBeDefined();
          const { field, set } = object.search!;
          const search = effectiveObject(declaration(), name)!.search!;
          const pageSize = Math.min(search.pageSize.max, 2);
          const tag = Math.random().toString(36).slice(2, 10);
          // A quote and a backslash in the value: a query language must keep them inside its string.
          const wanted = `o'brien\\${tag}@example.com`;
          const ids = fake.seed(
            name,
            Array.from({ length: 7 }, (_, i) => Date.UTC(2026, 2, 1) + i * minute),
          );
          ids.forEach((id, i) => set(fake, id, i % 2 === 0 ? wanted : `${tag}-${i}@example.com`));
          const before = fake.requests.length;
          const found = await searchAll({
            objectName: name,
            filters: [{ fieldName: field, value: wanted }],
            pageSize,
          });
          expect(found.map((record) => record.id).sort()).toEqual(ids.filter((_, i) => i % 2 === 0).sort());
          // Records, not bare ids: each carries the value it was found by.
          for (const record of found) expect(JSON.stringify(record.raw)).toContain(tag);
          expect(fake.requests.length - before).toBeGreaterThan(1);

          const none = await searchAll({
            objectName: name,
            filters: [{ fieldName: field, value: `nobody-${tag}@example.com` }],
            pageSize,
          });
          expect(none).toEqual([]);

          const error = await connector()
            .search({ objectName: name, filters: [{ fieldName: 'no_such_field_x', value: 'x' }], pageSize })
            .catch((e: unknown) => e);
          // Refused by the provider (a 4xx ProviderError), or before any call by a declaration that
          // lists the fields it can search (`members`): either way the caller gets a 4xx.
          expect(error).toBeInstanceOf(ConnectorError);
          const status =
            error instanceof ProviderError ? error.status : (toProblem(error) as ProblemError).status;
          expect(status).toBeGreaterThanOrEqual(400);
          expect(status).toBeLessThan(500);
        });
      }

      if (object.metadata) {
        it('describes its fields: type, read-only, custom, required and allowed values', async () => {
          const metadata = await connector().listObjectMetadata(name);
          expect(metadata.name).toBe(name);
          for (const [field, expected] of Object.entries(object.metadata!)) {
            expect({ field, ...metadata.fields[field] }).toMatchObject({
              field,
              fieldName: field,
              ...expected,
            });
          }
        });
      }

      fidelityChecks({
        name,
        object,
        fullRead,
        untimed,
        fake: () => fake,
        connector,
        get smallPage() {
          return smallPage(name);
        },
        day: (index) => Date.UTC(2026, 7, 1) + (spec.objects.indexOf(object) * 10 + index) * 86_400_000,
      });
    });

    const first = spec.objects[0].name;
    retryAfterCheck({ first, fake: () => fake, connector });

    it('waits out a 429 with Retry-After, and retries a 5xx of a read', async () => {
      fake.seed(first, [Date.UTC(2026, 1, 1)]);
      fake.failNext(1, 429, { 'retry-after': '1' });
      fake.failNext(1, 503);
      const before = fake.requests.length;
      const started = Date.now();
      await connector().readPage({ objectName: first, pageSize: smallPage(first) });
      // The same request three times (refused, failed, answered); a connector that reads more per
      // record (custom values apart) asks those after.
      const [refused, failed, answered] = fake.requests.slice(before, before + 3);
      expect(answered).toBeDefined();
      expect([failed.path, answered.path]).toEqual([refused.path, refused.path]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    });

    it('refreshes the credential once after a 401, and fails clearly when that does not help', async () => {
      const refreshed = refreshes;
      fake.rotateCredential();
      await connector().readPage({ objectName: first, pageSize: smallPage(first) });
      expect(refreshes).toBe(refreshed + 1);

      const stale = credential;
      target = { ...target, auth: async () => spec.material?.(stale) ?? materialFor(spec.provider, stale) };
      fake.rotateCredential();
      const error = await connector()
        .readPage({ objectName: first, pageSize: smallPage(first) })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).status).toBe(401);
      expect((error as ProviderError).retryable).toBe(false);
      credential = fake.credential;
      target = { ...target, auth: refreshingAuth };
    });
  });
}
