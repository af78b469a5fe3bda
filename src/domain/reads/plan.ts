import type { FieldSelection } from '../../delivery/record-mapping.js';
import { fieldSelectionFor } from '../../delivery/record-mapping.js';
import type { ReadMessageContext } from '../../delivery/messages.js';
import type { ReadType } from '../../schemas/reads.js';
import type { ReadObject } from '../../schemas/integration-content.js';
import type { ReadConfig } from '../../schemas/installations.js';
import type { ChangeTracking } from '../../providers/connector.js';
import { scheduledWindow, type ChangePosition } from './change-window.js';

/**
 * Everything a read decides when it starts, frozen in its checkpoint: every page of the read is
 * fetched with the same window and fields and shaped into the same messages, whichever worker runs
 * it and however often it resumes. Plain JSON.
 */
export interface ReadPlan {
  projectId: string;
  integrationId: string;
  installationId: string;
  connectionId: string;
  provider: string;
  /** The provider's object name. */
  objectName: string;
  readType: ReadType;
  /** The window read: [since, until). No `since` means the whole history. ISO 8601. */
  since?: string;
  until: string;
  /**
   * The read starts where the last one left the object (a scheduled read, or one whose window
   * covers the watermark): what it delivers moves the object's position on.
   */
  advancesWatermark: boolean;
  /** Start from the provider's own cursor (see `ChangePosition.resumeCursor`). */
  resumeFrom?: string;
  /** Deliver deletions too, from this instant (ISO 8601); absent: live records only. */
  deletedSince?: string;
  /** Leave out versions delivered before (a scheduled read's overlap shows them again). */
  dedupe?: boolean;
  /** Versions within this much of the newest are remembered for the next read (ms). */
  overlapMs?: number;
  deletionsOverlapMs?: number;
  /** Provider fields to fetch; all when absent. */
  fields?: string[];
  selection: FieldSelection;
  /** Records per delivered message. */
  pageSize: number;
  /** Records per provider page; absent: the most the provider allows. */
  providerPageSize?: number;
  deliveryMode: 'auto' | 'onRequest';
  destinationId: string;
  destinationName: string;
  context: ReadMessageContext;
  /** The installation fields every read event carries. */
  eventBase: Record<string, unknown>;
  /** A triggered read's window as asked for, for its events. */
  requested?: { sinceTimestamp?: string; untilTimestamp?: string };
}

/** Records per message when the manifest does not say (`delivery.pageSize`, 50 to 500). */
export const DEFAULT_DELIVERY_PAGE_SIZE = 200;

const DAY_MS = 24 * 60 * 60 * 1000;

export interface WindowInput {
  readType: ReadType;
  now: Date;
  /** Where the object's earlier reads left it, from what the provider returned. */
  position?: ChangePosition;
  /** How the object's changes are followed; absent, the object keeps no overlap and no cursor. */
  tracking?: ChangeTracking;
  /** Where incremental reads start when there is no watermark yet. */
  installationCreateTime: Date;
  backfill?: { defaultPeriod: { days?: number; fullHistory?: boolean } };
  sinceTimestamp?: string;
  untilTimestamp?: string;
  /** A backfill an operator asked for with its own window (`sinceTimestamp`, or none for the full history). */
  requestedWindow?: boolean;
}

export interface ReadWindow {
  since?: Date;
  until: Date;
  advancesWatermark: boolean;
  /** A scheduled read: where its deletions start, and the cursor it resumes from. */
  deletedSince?: Date;
  resumeFrom?: string;
}

const noTracking: ChangeTracking = {
  overlapMs: 0,
  deletions: 'none',
  deletionsOverlapMs: 0,
  resumable: false,
};

/**
 * The window of a read:
 * - scheduled: from where the object's reads stand (the provider's cursor, or the newest change
 *   delivered less the object's overlap; the installation's creation before any) until now;
 * - backfill: the last `days` days, or the whole history (also when no period is configured); or
 *   the window an operator asked for (`requestedWindow`);
 * - triggered: the window asked for; no `sinceTimestamp` means the whole history.
 * A read moves the object's position on only when it leaves no gap behind it: it starts at or
 * before where the position stands.
 */
export function readWindow(input: WindowInput): ReadWindow {
  const { now } = input;
  const watermark = input.position?.watermark;
  let since: Date | undefined;
  let until = now;
  if (input.readType === 'scheduled') {
    const scheduled = scheduledWindow(
      input.position ?? {},
      input.tracking ?? noTracking,
      input.installationCreateTime,
    );
    if (scheduled.since > until) scheduled.since = until;
    return {
      since: scheduled.since,
      until,
      advancesWatermark: true,
      deletedSince: scheduled.deletedSince,
      ...(scheduled.resumeFrom !== undefined && { resumeFrom: scheduled.resumeFrom }),
    };
  }
  if (input.readType === 'backfill' && !input.requestedWindow) {
    const period = input.backfill?.defaultPeriod;
    if (period && !period.fullHistory && period.days !== undefined)
      since = new Date(now.getTime() - period.days * DAY_MS);
  } else {
    if (input.sinceTimestamp) since = new Date(input.sinceTimestamp);
    if (input.untilTimestamp) until = new Date(Math.min(Date.parse(input.untilTimestamp), now.getTime()));
  }
  if (since && since > until) since = until;
  const advancesWatermark =
    since === undefined ||
    (watermark !== undefined ? since.getTime() <= watermark : input.readType !== 'triggered');
  return { ...(since && { since }), until, advancesWatermark };
}

/**
 * Which fields a read delivers: the manifest's required fields and renames, the customer's choices
 * and mappings. Everything when the customer chose `selectedFieldsAuto: all`, or when the manifest
 * offers every field (`optionalFieldsAuto: all`) and the customer picked none.
 */
export function readSelection(declared: ReadObject, configured: ReadConfig | undefined): FieldSelection {
  const selection = fieldSelectionFor(declared, configured ?? {});
  const picked = Object.values(configured?.selectedFields ?? {}).some(Boolean);
  if (declared.optionalFieldsAuto === 'all' && !picked) selection.allFields = true;
  return selection;
}

/** The provider fields to ask for (top-level names), or undefined for all of them. */
export function providerFields(selection: FieldSelection): string[] | undefined {
  if (selection.allFields) return undefined;
  const names = new Set<string>();
  const add = (name: string) => names.add(name.split('.')[0]);
  for (const name of selection.requiredFields ?? []) add(name);
  for (const [name, selected] of Object.entries(selection.selectedFields ?? {})) if (selected) add(name);
  for (const name of Object.values(selection.selectedFieldMappings ?? {})) add(name);
  return [...names];
}
