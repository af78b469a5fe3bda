import Type from 'typebox';
import { DateTime, PaginationQuery, Uuid } from './common.js';
import { DestinationParams } from './destinations.js';

/** One attempt to deliver one message to a destination, as `GET …/destinations/{d}/attempts` lists it. */
export const DeliveryAttemptSchema = Type.Object({
  id: Type.String({ description: 'Increasing with time; attempts are listed newest first.' }),
  messageId: Type.String({ description: 'The `webhook-id` header: the same on every retry of one message.' }),
  attempt: Type.Integer({ description: '1 for the first attempt of the message.' }),
  kind: Type.Enum(['record', 'notification']),
  operationId: Type.Optional(Uuid),
  delivered: Type.Boolean(),
  pending: Type.Optional(
    Type.Boolean({
      description:
        'Present and true while no answer is recorded: the message is being sent, or the process sending it stopped before recording the answer (the message is sent again under the same id).',
    }),
  ),
  status: Type.Optional(Type.Integer({ description: 'The receiver’s HTTP status, when it answered.' })),
  durationMs: Type.Integer({ description: 'Latency of the attempt, response included.' }),
  responseExcerpt: Type.Optional(Type.String({ description: 'The start of the receiver’s answer.' })),
  error: Type.Optional(Type.String()),
  createTime: DateTime,
});

export const DeliveryAttemptListQuery = Type.Object({
  ...PaginationQuery.properties,
  delivered: Type.Optional(
    Type.Boolean({ description: 'Only successful (true) or failed (false) attempts.' }),
  ),
});

const RunningReadSchema = Type.Object({
  objectName: Type.String(),
  operationId: Uuid,
  readType: Type.String(),
  plannedAt: DateTime,
  startedAt: DateTime,
});

/** What the installation's workflow says of its schedules, from its `describe` query. */
export const InstallationScheduleSchema = Type.Object({
  ready: Type.Boolean({ description: 'False until the workflow applied its first config.' }),
  configId: Type.String(),
  objects: Type.Array(
    Type.Object({
      objectName: Type.String(),
      schedule: Type.String(),
      paused: Type.Boolean(),
      pauseNote: Type.Optional(Type.String()),
      nextFireAt: Type.Optional(DateTime),
      needsBackfill: Type.Boolean(),
      queuedTriggers: Type.Integer(),
      running: Type.Optional(RunningReadSchema),
      lastRun: Type.Optional(
        Type.Object({
          readType: Type.String(),
          startedAt: DateTime,
          finishedAt: DateTime,
          succeeded: Type.Boolean(),
        }),
      ),
      consecutiveAuthFailures: Type.Integer(),
    }),
  ),
  recentFires: Type.Array(RunningReadSchema, { description: 'The latest read starts, newest last.' }),
  temporal: Type.Object({ workflowId: Type.String(), url: Type.String() }),
});

export const DeliveryAttemptParams = Type.Object({
  ...DestinationParams.properties,
  attemptId: Type.String({ pattern: '^[0-9]{1,18}$', description: 'An attempt id from the attempts list.' }),
});

export const DeliveredMessageSchema = Type.Object({
  messageId: Type.String(),
  kind: Type.Enum(['notification', 'subscribe', 'schema.watch']),
  operationId: Type.Optional(Uuid),
  body: Type.String({ description: 'The exact JSON sent, the same bytes on every attempt.' }),
});
