import Type, { type Static } from 'typebox';
import type { FieldSelection } from '../../delivery/record-mapping.js';
import { fieldSelectionFor } from '../../delivery/record-mapping.js';
import { schemaIssues } from '../../core/validation.js';
import { ReadTypeSchema, type ReadType } from '../../schemas/reads.js';
import { ReadSetupError } from './failures.js';
import type { ReadObject } from '../../schemas/integration-content.js';
import type { ReadConfig } from '../../schemas/installations.js';
import type { ChangeTracking } from '../../providers/connector.js';
import { scheduledWindow, type ChangePosition } from './change-window.js';

const strict = { additionalProperties: false } as const;
const Time = Type.String({ format: 'date-time' });

const FieldSelectionSchema = Type.Object(
  {
    requiredFields: Type.Optional(Type.Array(Type.String())),
    selectedFields: Type.Optional(Type.Record(Type.String(), Type.Boolean())),
    selectedFieldMappings: Type.Optional(Type.Record(Type.String(), Type.String())),
    allFields: Type.Optional(Type.Boolean()),
    fieldMappings: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  strict,
);

const ReadMessageContextSchema = Type.Object(
  {
    action: Type.Literal('read'),
    projectId: Type.String(),
    provider: Type.String(),
    workspace: Type.Optional(Type.String()),
    groupRef: Type.String(),
    groupName: Type.String(),
    consumerRef: Type.String(),
    consumerName: Type.String(),
    installationId: Type.String(),
    installationUpdateTime: Time,
    objectName: Type.String(),
    rawObjectName: Type.String(),
    operationId: Type.String(),
    operationTime: Time,
    readType: ReadTypeSchema,
  },
  strict,
);

/**
 * Everything a read decides when it starts, frozen in its checkpoint: every page of the read is
 * fetched with the same window and fields and shaped into the same messages, whichever worker runs
 * it and however often it resumes. Stored as JSON and read back through this schema (`readPlanOf`).
 */
export const ReadPlanSchema = Type.Object(
  {
    projectId: Type.String(),
    integrationId: Type.String(),
    installationId: Type.String(),
    connectionId: Type.String(),
    provider: Type.String(),
    /** The provider's object name. */
    objectName: Type.String(),
    readType: ReadTypeSchema,
    /** The window read: [since, until). No `since` means the whole history. */
    since: Type.Optional(Time),
    until: Time,
    /**
     * The read starts where the last one left the object (a scheduled read, or one whose window
     * covers the watermark): what it delivers moves the object's position on when it succeeds.
     */
    advancesWatermark: Type.Boolean(),
    /** Start from the provider's own cursor (see `ChangePosition.resumeCursor`). */
    resumeFrom: Type.Optional(Type.String()),
    /** Deliver deletions too, from this instant; absent: live records only. */
    deletedSince: Type.Optional(Time),
    /**
     * A full read (`read.fullRead`): every record listed is compared with its fingerprint, which the
     * read refreshes; `changedOnly` delivers only records new or changed since (scheduled reads), and
     * `inferDeletions` delivers, after a complete walk, the records it no longer listed.
     */
    fingerprints: Type.Optional(
      Type.Object({ changedOnly: Type.Boolean(), inferDeletions: Type.Boolean() }, strict),
    ),
    /** Leave out versions delivered before (a scheduled read's overlap shows them again). */
    dedupe: Type.Optional(Type.Boolean()),
    /** Versions within this much of the newest are remembered for the next read (ms). */
    overlapMs: Type.Optional(Type.Number({ minimum: 0 })),
    deletionsOverlapMs: Type.Optional(Type.Number({ minimum: 0 })),
    /** Provider fields to fetch; all when absent. */
    fields: Type.Optional(Type.Array(Type.String())),
    selection: FieldSelectionSchema,
    /** Records per delivered message. */
    pageSize: Type.Integer({ minimum: 1 }),
    /** Records per provider page; absent: the most the provider allows. */
    providerPageSize: Type.Optional(Type.Integer({ minimum: 1 })),
    deliveryMode: Type.Enum(['auto', 'onRequest']),
    destinationId: Type.String(),
    destinationName: Type.String(),
    context: ReadMessageContextSchema,
    /** The installation fields every read event carries. */
    eventBase: Type.Record(Type.String(), Type.Unknown()),
    /** A triggered read's window as asked for, for its events. */
    requested: Type.Optional(
      Type.Object({ sinceTimestamp: Type.Optional(Time), untilTimestamp: Type.Optional(Time) }, strict),
    ),
  },
  strict,
);
export type ReadPlan = Static<typeof ReadPlanSchema>;

/** A checkpoint's stored plan, checked against the schema: never taken on trust. */
export function readPlanOf(stored: unknown): ReadPlan {
  const issues = schemaIssues(ReadPlanSchema, stored, 'body', 'plan');
  if (issues.length) {
    throw new ReadSetupError(
      `The read's stored plan is not one this version of Ferry can resume: ${issues
        .slice(0, 3)
        .map((issue) => issue.detail)
        .join('; ')}`,
    );
  }
  return stored as ReadPlan;
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
  precisionMs: 1,
  deletionsPrecisionMs: 1,
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
