import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';
import { percentile } from './measure.js';

/** A scheduled read as its workflow's `describe` reports it: planned, and started (workflow time). */
export interface ObservedFire {
  workflowId: string;
  plannedAt: number;
  startedAt: number;
}

// A CommonJS module: its namespace is its default export under ESM.
const EventType = proto.temporal.api.enums.v1.EventType;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/**
 * Where a fire's lateness comes from, read off its workflow's history. Lateness (workflow time at
 * the read's start minus its planned time) is the sum of four parts:
 * - `timerArmedLate`: the timer that woke the workflow was due after the planned time. Its length
 *   was measured from workflow time when armed, but it starts when its task completes.
 * - `timerFiredLate`: the server fired it after it was due (its timer queue).
 * - `taskPickedUpLate`: from the timer firing to the worker starting the workflow task.
 * - `inTask`: from the task's start to the read's start (workflow time moves on within a task only
 *   with local activity results).
 * `armingTaskMs` is how long the task that armed the timer ran (started to completed), and
 * `armedAfterTaskStart` how far into it workflow time was when the timer was armed.
 */
export async function latenessParts(client: Client, fires: ObservedFire[], concurrency = 16) {
  const byWorkflow = new Map<string, ObservedFire[]>();
  for (const fire of fires)
    byWorkflow.set(fire.workflowId, [...(byWorkflow.get(fire.workflowId) ?? []), fire]);
  const parts = {
    timerArmedLate: [] as number[],
    timerFiredLate: [] as number[],
    taskPickedUpLate: [] as number[],
    inTask: [] as number[],
    armingTaskMs: [] as number[],
    armedAfterTaskStart: [] as number[],
  };
  let armedInTaskWithLocalActivities = 0;
  let withoutTimer = 0;
  let unread = 0;
  const ids = [...byWorkflow.keys()];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ids.length) {
        const id = ids[next++];
        let events: HistoryEvent[];
        try {
          events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
        } catch {
          unread += byWorkflow.get(id)!.length;
          continue;
        }
        for (const fire of byWorkflow.get(id)!) {
          const split = splitLateness(events, fire);
          if (!split) {
            withoutTimer++;
            continue;
          }
          for (const key of Object.keys(parts) as (keyof typeof parts)[]) parts[key].push(split[key]);
          if (split.armingTaskLocalActivities) armedInTaskWithLocalActivities++;
        }
      }
    }),
  );
  const summary = Object.fromEntries(
    Object.entries(parts).map(([key, values]) => [
      key,
      {
        p50Ms: Math.round(percentile(values, 50)),
        p99Ms: Math.round(percentile(values, 99)),
        maxMs: Math.round(Math.max(0, ...values)),
      },
    ]),
  );
  return { fires: parts.inTask.length, withoutTimer, unread, armedInTaskWithLocalActivities, ...summary };
}

function splitLateness(events: HistoryEvent[], fire: ObservedFire) {
  const at = (event: HistoryEvent) => tsToMs(event.eventTime);
  // The task whose workflow time began at or before the read's start: the last one started by then.
  const taskStarted = events.findLast(
    (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED && at(event) <= fire.startedAt,
  );
  if (!taskStarted) return undefined;
  const fired = events.findLast(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_TIMER_FIRED &&
      Number(event.eventId) < Number(taskStarted.eventId),
  );
  if (!fired) return undefined;
  // A fire woken by something else (a message, a read's end) is not this timer's.
  const firedId = Number(fired.eventId);
  const woken = events.some(
    (event) =>
      Number(event.eventId) > firedId &&
      Number(event.eventId) < Number(taskStarted.eventId) &&
      event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  );
  if (woken) return undefined;
  const startedId = Number(fired.timerFiredEventAttributes!.startedEventId);
  const timerStarted = events.find((event) => Number(event.eventId) === startedId)!;
  const timeout = timerStarted.timerStartedEventAttributes!.startToFireTimeout;
  const due = at(timerStarted) + tsToMs(timeout);
  const armingCompletedId = Number(timerStarted.timerStartedEventAttributes!.workflowTaskCompletedEventId);
  const armingCompleted = events.find((event) => Number(event.eventId) === armingCompletedId)!;
  const armingStartedId = Number(armingCompleted.workflowTaskCompletedEventAttributes!.startedEventId);
  const armingStarted = events.find((event) => Number(event.eventId) === armingStartedId)!;
  const armingTaskLocalActivities = events.filter(
    (event) =>
      Number(event.markerRecordedEventAttributes?.workflowTaskCompletedEventId ?? 0) === armingCompletedId,
  ).length;
  // The timer ran to the planned time: its length says the workflow time it was armed at.
  const armedAt = fire.plannedAt - (due - at(timerStarted));
  return {
    timerArmedLate: due - fire.plannedAt,
    timerFiredLate: at(fired) - due,
    taskPickedUpLate: at(taskStarted) - at(fired),
    inTask: fire.startedAt - at(taskStarted),
    armingTaskMs: at(armingCompleted) - at(armingStarted),
    armedAfterTaskStart: armedAt - at(armingStarted),
    armingTaskLocalActivities,
  };
}

/**
 * The history around each of the latest fires, for the tail the percentiles cannot explain: every
 * event from `beforeMs` ahead of the planned fire to the read's start, by type and time (ms after the
 * planned fire), at most `maxEvents` each.
 */
export async function latestFireHistories(
  client: Client,
  fires: ObservedFire[],
  count = 10,
  { beforeMs = 120_000, maxEvents = 60 } = {},
) {
  // An installation's objects often fire together: one history for each workflow and planned time.
  const byFire = new Map(fires.map((fire) => [`${fire.workflowId}/${fire.plannedAt}`, fire]));
  const latest = [...byFire.values()]
    .sort((a, b) => b.startedAt - b.plannedAt - (a.startedAt - a.plannedAt))
    .slice(0, count);
  return Promise.all(
    latest.map(async (fire) => {
      const events = (await client.workflow.getHandle(fire.workflowId).fetchHistory()).events ?? [];
      const around = events
        .filter((event) => {
          const at = tsToMs(event.eventTime);
          return at >= fire.plannedAt - beforeMs && at <= fire.startedAt;
        })
        .slice(-maxEvents)
        .map((event) => [
          String(EventType[event.eventType ?? 0]).replace('EVENT_TYPE_', ''),
          tsToMs(event.eventTime) - fire.plannedAt,
        ]);
      return {
        workflowId: fire.workflowId,
        plannedAt: new Date(fire.plannedAt).toISOString(),
        lateMs: fire.startedAt - fire.plannedAt,
        historyLength: events.length,
        events: around,
      };
    }),
  );
}
