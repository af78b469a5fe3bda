/**
 * Ferry's work on Temporal by concern, each on a task queue of its own, so a backlog in one never
 * delays the others and worker replicas can be given to each as its load needs:
 *
 * - `installations`: installation workflows with their scheduled reads, backfills, triggered reads
 *   and subscriptions, and the deployment's retention workflow. It keeps the deployment's base queue
 *   (FERRY_TASK_QUEUE) itself, where long-running installation workflows already are.
 * - `deliveries`: notification events, change events and schema changes on their way to webhooks:
 *   short, bursty and waited for by builders.
 * - `writes`: asynchronous writes, which a builder's request started and is waiting on.
 *
 * A workflow's activities and child workflows run on its own queue.
 */
export const WORK_CONCERNS = ['installations', 'deliveries', 'writes'] as const;

export type WorkConcern = (typeof WORK_CONCERNS)[number];

export function isWorkConcern(value: string): value is WorkConcern {
  return (WORK_CONCERNS as readonly string[]).includes(value);
}

/** The task queue of one concern in a deployment whose base queue is `baseTaskQueue`. */
export function taskQueueOf(baseTaskQueue: string, concern: WorkConcern): string {
  return concern === 'installations' ? baseTaskQueue : `${baseTaskQueue}-${concern}`;
}
