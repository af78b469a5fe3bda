import {
  contentHash,
  memoryOf,
  newestTime,
  scheduledWindow,
  undelivered,
  versionsToRemember,
  type ChangePosition,
  type SeenVersion,
} from '../../../src/domain/reads/change-window.js';
import type { Connector, ProviderRecord } from '../../../src/providers/connector.js';

/**
 * Scheduled reads of one object as the read pipeline runs them (plan.ts, page-feed.ts,
 * checkpoint-writer.ts), with the object's position and the versions it remembers kept in memory
 * instead of PostgreSQL: the same rules (change-window.ts), so the kit proves what builders get.
 */
export class ScheduledReads {
  readonly position: ChangePosition = {};
  readonly seen = new Map<string, SeenVersion>();
  /** Everything delivered, in order, across reads. */
  readonly delivered: ProviderRecord[] = [];
  /** A full read's fingerprints (read_fingerprints), by record id. */
  readonly fingerprints = new Map<string, string>();

  constructor(
    private readonly connector: () => Connector,
    private readonly objectName: string,
    /** The installation's creation: where the first read starts. */
    private readonly start: number,
    /** Records per provider page; absent, the provider's maximum. */
    private readonly pageSize?: number,
    /** The installation's selected fields; absent, every field. */
    private readonly fields?: string[],
  ) {}

  /** One scheduled read ending at `now` (the provider's clock); returns what it delivered. */
  async read(now: number): Promise<ProviderRecord[]> {
    const connector = this.connector();
    const tracking = connector.changeTracking(this.objectName);
    if (tracking.fullRead) return this.readWhole(connector);
    const window = scheduledWindow(this.position, tracking, new Date(this.start));
    const deliveredNow: ProviderRecord[] = [];
    let pageToken: string | undefined;
    for (let pages = 0; pages < 10_000; pages++) {
      const page = await connector.readPage({
        objectName: this.objectName,
        since: window.since,
        until: new Date(now),
        ...(this.pageSize !== undefined && { pageSize: this.pageSize }),
        ...(this.fields && { fields: this.fields }),
        ...(pageToken ? { pageToken } : window.resumeFrom !== undefined && { resumeFrom: window.resumeFrom }),
        ...(tracking.deletions !== 'none' && { includeDeleted: true, deletedSince: window.deletedSince }),
      });
      const fresh = undelivered(page.records, this.seen);
      deliveredNow.push(...fresh);
      const newest = newestTime(page.records);
      if (newest !== undefined) {
        if (page.deletions)
          this.position.deletedWatermark = Math.max(this.position.deletedWatermark ?? newest, newest);
        else this.position.watermark = Math.max(this.position.watermark ?? newest, newest);
      }
      // Everything delivered is remembered while the read runs; finishing keeps the overlap only.
      for (const { id, ...version } of versionsToRemember(fresh, newestTime(fresh), Infinity)) {
        const known = this.seen.get(id);
        if (!known || version.at >= known.at) this.seen.set(id, version);
      }
      if (page.done) {
        if (page.resumeCursor !== undefined) this.position.resumeCursor = page.resumeCursor;
        this.forgetOutsideOverlap(tracking);
        this.delivered.push(...deliveredNow);
        return deliveredNow;
      }
      pageToken = page.nextPageToken;
    }
    throw new Error(`a scheduled read of ${this.objectName} never ended`);
  }

  /**
   * A full read (full-read.ts): the whole listing, each record delivered when its fingerprint is new
   * or different; after the last page, the records it no longer listed as inferred deletions.
   */
  private async readWhole(connector: Connector): Promise<ProviderRecord[]> {
    const deliveredNow: ProviderRecord[] = [];
    const listed = new Set<string>();
    let pageToken: string | undefined;
    for (let pages = 0; pages < 10_000; pages++) {
      const page = await connector.readPage({
        objectName: this.objectName,
        ...(this.pageSize !== undefined && { pageSize: this.pageSize }),
        ...(this.fields && { fields: this.fields }),
        ...(pageToken && { pageToken }),
      });
      for (const record of page.records) {
        listed.add(record.id);
        const hash = contentHash(record);
        if (this.fingerprints.get(record.id) === hash) continue;
        this.fingerprints.set(record.id, hash);
        deliveredNow.push(record);
      }
      if (page.done) {
        for (const id of [...this.fingerprints.keys()].filter((id) => !listed.has(id))) {
          this.fingerprints.delete(id);
          deliveredNow.push({ id, raw: {}, deleted: true });
        }
        this.delivered.push(...deliveredNow);
        return deliveredNow;
      }
      pageToken = page.nextPageToken;
    }
    throw new Error(`a full read of ${this.objectName} never ended`);
  }

  /** As `forgetOldVersions` does when a read finishes, with the plan's horizons (`memoryOf`). */
  private forgetOutsideOverlap(tracking: ReturnType<Connector['changeTracking']>): void {
    const memory = memoryOf(tracking);
    const changesFrom = (this.position.watermark ?? -Infinity) - memory.overlapMs;
    const deletionsFrom =
      this.position.deletedWatermark !== undefined
        ? this.position.deletedWatermark - memory.deletionsOverlapMs
        : changesFrom;
    for (const [id, version] of this.seen) {
      if (version.at < Math.min(changesFrom, deletionsFrom)) this.seen.delete(id);
    }
  }
}
