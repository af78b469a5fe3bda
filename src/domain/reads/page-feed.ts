import {
  encodeEntry,
  MessageTooLargeError,
  type ReadResultEntry,
  splitEncoded,
  type MessagePart,
} from '../../delivery/messages.js';
import { fieldMapper } from '../../delivery/record-mapping.js';
import type { Connector, ProviderRecord, ReadPageInput } from '../../providers/connector.js';
import { ProviderError } from '../../providers/errors.js';
import { em as newEntityManager } from '../../db/orm.js';
import type { LogEntry } from '../operation-logs.js';
import { newestTime, undelivered, versionsToRemember, type SeenVersion } from './change-window.js';
import { pageConnector } from './connector.js';
import type { ReadPlan } from './plan.js';
import { seenVersions } from './seen-versions.js';
import {
  compareFingerprints,
  inferredDeletionsAfter,
  inferredDeletionsToken,
  INFERRED_DELETIONS_PAGE,
  unlistedRecords,
  type Fingerprint,
} from './full-read.js';

/**
 * The provider side of a read: fetches pages one after the other from a page token and shapes each
 * into its messages, running ahead of delivery by at most `depth` pages. A page's token comes from
 * the page before, so fetching is sequential; running it beside shaping and delivery hides the
 * provider's latency, and the bound keeps memory flat however long the read.
 */

export interface ShapedPage {
  pageIndex: number;
  /** Token of the page after this one; absent when `done`. */
  nextPageToken?: string;
  done: boolean;
  parts: MessagePart[];
  /** Records in the messages (a record too large for any message is left out and logged). */
  records: number;
  /** The newest `updatedAt` on the page (of its deletions, on a page of the listing of deletions). */
  newest?: Date;
  /** The page comes from the listing of deletions: `newest` is a deletion time. */
  deletions?: boolean;
  /** The versions of this page a later read's overlap may show again (see change-window.ts). */
  remember: ({ id: string } & SeenVersion)[];
  /** On the last page of a listing that resumes from the provider's cursor: where the next read starts. */
  resumeCursor?: string;
  /** DEBUG entries for the provider requests, and ERRORs for records left out. */
  logs: LogEntry[];
  /** A full read: the fingerprints of every record listed on the page, marked with its checkpoint. */
  fingerprints?: Fingerprint[];
  /** A full read's inferred deletions: their fingerprints go with the page's checkpoint. */
  forget?: string[];
}

/** A page could not be fetched; carries the request logs of the failed attempts. */
export class PageFetchError extends Error {
  constructor(
    readonly pageIndex: number,
    readonly reason: unknown,
    readonly logs: LogEntry[],
  ) {
    super(reason instanceof Error ? reason.message : String(reason));
  }
}

/** Records mapped and encoded between two turns of the event loop. */
const SHAPE_CHUNK = 50;

/**
 * The page's messages. A record too large for a message even on its own cannot be delivered; it is
 * left out and named in an ERROR log rather than blocking the object's reads for good.
 *
 * Records are mapped and encoded a chunk at a time, letting the event loop turn in between: this
 * runs while the page before is being delivered, and the destination's answers must not wait for a
 * whole page's work before the next message goes out.
 */
export async function pageMessages(
  plan: ReadPlan,
  records: readonly ListedRecord[],
  logs: LogEntry[],
): Promise<MessagePart[]> {
  return messagesOf(
    plan,
    await encodeRecords(plan, records),
    records.map((record) => record.id),
    logs,
  );
}

/** A record as a read delivers it: `inferred` on a deletion a full read inferred (full-read.ts). */
type ListedRecord = ProviderRecord & { inferred?: true };

async function encodeRecords(plan: ReadPlan, records: readonly ListedRecord[]): Promise<Buffer[]> {
  const mapRecord = fieldMapper(plan.selection);
  const encoded: Buffer[] = [];
  for (let start = 0; start < records.length; start += SHAPE_CHUNK) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    const end = Math.min(start + SHAPE_CHUNK, records.length);
    for (let index = start; index < end; index++) {
      const record = records[index];
      const mapped = mapRecord(record.raw, record.values);
      // A deletion says so, with the id of the record it removes (and whether Ferry inferred it).
      const entry: ReadResultEntry = record.deleted
        ? { id: record.id, deleted: true, ...(record.inferred && { inferred: true }), ...mapped }
        : mapped;
      encoded.push(encodeEntry(entry));
    }
  }
  return encoded;
}

function messagesOf(plan: ReadPlan, encoded: Buffer[], ids: string[], logs: LogEntry[]): MessagePart[] {
  for (;;) {
    if (!encoded.length) return [];
    try {
      return splitEncoded(plan.context, encoded, plan.pageSize);
    } catch (error) {
      if (!(error instanceof MessageTooLargeError)) throw error;
      logs.push({
        severity: 'ERROR',
        msg: `Record ${ids[error.recordIndex]} was not delivered: it is too large for one message.`,
        error: error.message,
        details: {
          recordId: ids[error.recordIndex],
          messageBytes: error.messageBytes,
          maxBytes: error.maxBytes,
        },
      });
      encoded.splice(error.recordIndex, 1);
      ids.splice(error.recordIndex, 1);
    }
  }
}

/** A provider page as fetched, before it is shaped into messages. */
interface ProviderPage {
  pageIndex: number;
  nextPageToken?: string;
  done: boolean;
  /** The records to deliver: what the provider listed, less what was delivered before. */
  records: readonly ListedRecord[];
  /** The newest time the provider listed on the page, delivered before or not. */
  newest?: number;
  deletions?: boolean;
  resumeCursor?: string;
  logs: LogEntry[];
  /** A full read's page of inferred deletions. */
  inferred?: boolean;
}

/** The read's request for one page: its window, fields and deletions, at the provider's page size. */
function pageRequest(plan: ReadPlan, pageToken: string | undefined, resume: boolean): ReadPageInput {
  return {
    objectName: plan.objectName,
    ...(plan.fields && { fields: plan.fields }),
    ...(plan.since && { since: new Date(plan.since) }),
    // A full read lists everything there is, changed since it began or not.
    ...(!plan.fingerprints && { until: new Date(plan.until) }),
    ...(plan.providerPageSize !== undefined && { pageSize: plan.providerPageSize }),
    ...(pageToken && { pageToken }),
    ...(!pageToken && resume && plan.resumeFrom !== undefined && { resumeFrom: plan.resumeFrom }),
    ...(plan.deletedSince && { includeDeleted: true, deletedSince: new Date(plan.deletedSince) }),
  };
}

/** The provider no longer takes a cursor it gave (expired, or the listing changed): start from `since`. */
function cursorRefused(error: unknown): boolean {
  return (
    error instanceof ProviderError &&
    error.status !== undefined &&
    [400, 404, 410, 422].includes(error.status)
  );
}

/**
 * The versions this run of a read delivered, by record id: pages fetched ahead of their checkpoint
 * are recognised against them as well as against `read_seen`, so a feed listed newest first (a
 * record on several pages, Stripe's events) delivers each record's newest version only.
 */
type ReadMemory = Map<string, SeenVersion>;

async function readProviderPage(
  plan: ReadPlan,
  connectorFor: (logs: LogEntry[]) => Promise<Connector>,
  pageIndex: number,
  pageToken: string | undefined,
  memory?: ReadMemory,
): Promise<ProviderPage> {
  const logs: LogEntry[] = [];
  try {
    const after = plan.fingerprints && inferredDeletionsAfter(pageToken);
    if (after !== undefined) return await inferredDeletionsPage(plan, pageIndex, after);
    const connector = await connectorFor(logs);
    const page = await connector.readPage(pageRequest(plan, pageToken, true)).catch((error: unknown) => {
      if (pageToken || plan.resumeFrom === undefined || !cursorRefused(error)) throw error;
      logs.push({
        severity: 'WARN',
        msg: `The provider refused the cursor the last read left; reading from ${plan.since} instead.`,
        error: error instanceof Error ? error.message : String(error),
      });
      return connector.readPage(pageRequest(plan, pageToken, false));
    });
    const records = plan.dedupe ? await unseen(plan, page.records, memory) : page.records;
    // A full read that delivers deletions infers them once the whole listing is walked.
    const inferNext = page.done && plan.fingerprints?.inferDeletions === true;
    const nextPageToken = inferNext ? inferredDeletionsToken() : page.nextPageToken;
    return {
      pageIndex,
      ...(nextPageToken && { nextPageToken }),
      done: page.done && !inferNext,
      records,
      newest: newestTime(page.records),
      ...(page.deletions && { deletions: true }),
      ...(page.resumeCursor !== undefined && { resumeCursor: page.resumeCursor }),
      logs,
    };
  } catch (error) {
    throw new PageFetchError(pageIndex, error, logs);
  }
}

/** A full read's next page of inferred deletions: records it did not list, after `after`. */
async function inferredDeletionsPage(
  plan: ReadPlan,
  pageIndex: number,
  after: string,
): Promise<ProviderPage> {
  const ids = await unlistedRecords(await newEntityManager(), plan, after);
  const done = ids.length < INFERRED_DELETIONS_PAGE;
  return {
    pageIndex,
    ...(!done && { nextPageToken: inferredDeletionsToken(ids[ids.length - 1]) }),
    done,
    records: ids.map((id) => ({ id, raw: {}, deleted: true, inferred: true })),
    inferred: true,
    logs: [],
  };
}

/**
 * The page's records less the versions delivered before: by earlier reads (a scheduled read's
 * overlap), by earlier runs of this read, and by this run's earlier pages (`memory`).
 */
async function unseen(
  plan: ReadPlan,
  records: readonly ProviderRecord[],
  memory: ReadMemory | undefined,
): Promise<ProviderRecord[]> {
  if (!records.length) return [];
  const seen = await seenVersions(
    await newEntityManager(),
    plan,
    records.map((record) => record.id),
  );
  for (const record of records) {
    const version = memory?.get(record.id);
    const stored = seen.get(record.id);
    if (version && (!stored || version.at >= stored.at)) seen.set(record.id, version);
  }
  const fresh = seen.size ? undelivered(records, seen) : [...records];
  for (const { id, ...version } of versionsToRemember(fresh, newestTime(fresh), Infinity)) {
    const known = memory?.get(id);
    if (!known || version.at >= known.at) memory?.set(id, version);
  }
  return fresh;
}

async function shapePage(plan: ReadPlan, page: ProviderPage): Promise<ShapedPage> {
  let ids = page.records.map((record) => record.id);
  let encoded = await encodeRecords(plan, page.records);
  let fingerprints: Fingerprint[] | undefined;
  if (plan.fingerprints && !page.inferred)
    ({ ids, encoded, fingerprints } = await compareFingerprints(
      await newEntityManager(),
      plan,
      ids,
      encoded,
    ));
  const parts = messagesOf(plan, encoded, ids, page.logs);
  const overlap = (page.deletions ? plan.deletionsOverlapMs : plan.overlapMs) ?? 0;
  return {
    pageIndex: page.pageIndex,
    ...(page.nextPageToken && { nextPageToken: page.nextPageToken }),
    done: page.done,
    parts,
    records: parts.reduce((sum, part) => sum + part.numRecords, 0),
    ...(page.newest !== undefined && { newest: new Date(page.newest) }),
    ...(page.deletions && { deletions: true }),
    // A scheduled read remembers all it delivers until it finishes (a later run of it, or a later page
    // of a feed listed newest first, recognises them); finishing forgets all but the overlap.
    remember:
      plan.advancesWatermark && !plan.fingerprints
        ? versionsToRemember(page.records, page.newest, plan.dedupe ? Infinity : overlap)
        : [],
    ...(page.resumeCursor !== undefined && { resumeCursor: page.resumeCursor }),
    logs: page.logs,
    ...(fingerprints && { fingerprints }),
    ...(page.inferred && { forget: ids }),
  };
}

export async function fetchPage(
  plan: ReadPlan,
  connectorFor: (logs: LogEntry[]) => Promise<Connector>,
  pageIndex: number,
  pageToken: string | undefined,
): Promise<ShapedPage> {
  return shapePage(plan, await readProviderPage(plan, connectorFor, pageIndex, pageToken));
}

export interface PageFeed {
  /** The next shaped page; undefined after the last one. Throws `PageFetchError` once earlier pages are taken. */
  next(): Promise<ShapedPage | undefined>;
  /** Fetch nothing more. */
  stop(): void;
  /**
   * The feed stopped before a full read's inferred deletions: they are read by a new feed once every
   * page before them is checkpointed (full-read.ts).
   */
  readonly paused: boolean;
}

/** A page after which the feed pauses: the next is the first of a full read's inferred deletions. */
function pausesAfter(page: { done: boolean; nextPageToken?: string }): boolean {
  return !page.done && page.nextPageToken === inferredDeletionsToken();
}

/**
 * Pages fetched ahead of delivery, at most `depth` of them. The next page is asked for as soon as
 * the provider has answered for this one, while this one is still being shaped into messages, so
 * the provider's time to answer hides behind Ferry's work on the page before.
 */
export function pageFeed(
  plan: ReadPlan,
  /** Where to begin; `fetched` is the page at `pageIndex` when it was fetched already. */
  start: { pageIndex: number; pageToken?: string; fetched?: ShapedPage },
  maxPages: number,
  depth = 2,
  /** No page is fetched after this time (ms since the epoch). */
  deadline = Infinity,
): PageFeed {
  const ready: Promise<ShapedPage>[] = [];
  let failure: unknown;
  let finished = false;
  let stopped = false;
  let paused = false;
  let wakeConsumer: (() => void) | undefined;
  let wakeProducer: (() => void) | undefined;
  const wake = (which: 'consumer' | 'producer') => {
    const resolve = which === 'consumer' ? wakeConsumer : wakeProducer;
    if (which === 'consumer') wakeConsumer = undefined;
    else wakeProducer = undefined;
    resolve?.();
  };

  if (start.fetched) ready.push(Promise.resolve(start.fetched));
  void (async () => {
    if (start.fetched?.done) return;
    if (start.fetched && pausesAfter(start.fetched)) {
      paused = true;
      return;
    }
    let token = start.fetched ? start.fetched.nextPageToken : start.pageToken;
    const connector = pageConnector(plan.connectionId);
    const memory: ReadMemory | undefined = plan.dedupe ? new Map() : undefined;
    for (const { id, ...version } of start.fetched?.remember ?? []) memory?.set(id, version);
    for (let offset = start.fetched ? 1 : 0; offset < maxPages && !stopped; offset++) {
      while (ready.length >= depth && !stopped)
        await new Promise<void>((resolve) => (wakeProducer = resolve));
      // The first page is always fetched, so every call moves the read on.
      if (stopped || (offset > 0 && Date.now() >= deadline)) break;
      const page = await readProviderPage(plan, connector, start.pageIndex + offset, token, memory);
      const shaped = shapePage(plan, page);
      // Its failure is the consumer's to see when it reaches the page, not an unhandled rejection.
      shaped.catch(() => {});
      ready.push(shaped);
      wake('consumer');
      if (page.done) break;
      if (pausesAfter(page)) {
        paused = true;
        break;
      }
      token = page.nextPageToken;
    }
  })()
    .catch((error: unknown) => {
      failure = error;
    })
    .finally(() => {
      finished = true;
      wake('consumer');
    });

  return {
    async next() {
      for (;;) {
        const page = ready.shift();
        if (page) {
          wake('producer');
          return page;
        }
        if (failure) throw failure;
        if (finished || stopped) return undefined;
        await new Promise<void>((resolve) => (wakeConsumer = resolve));
      }
    },
    stop() {
      stopped = true;
      wake('producer');
    },
    get paused() {
      return paused;
    },
  };
}
