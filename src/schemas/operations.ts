import Type, { type Static } from 'typebox';
import { DateTime, Paginated, PaginationQuery, ProjectIdOrName, Uuid } from './common.js';

export const OperationProgressSchema = Type.Object({
  installationId: Uuid,
  objectName: Type.String(),
  operationId: Uuid,
  recordsProcessed: Type.Integer(),
  recordsEstimatedTotal: Type.Optional(Type.Integer()),
});

export const OperationSchema = Type.Object({
  id: Uuid,
  projectId: Uuid,
  integrationId: Uuid,
  installationId: Uuid,
  configId: Uuid,
  actionType: Type.Enum(['read', 'write', 'subscribe', 'schema.watch', 'mcp.tool'], {
    description: '`mcp.tool`: one tool call of an AI agent through the MCP listener.',
  }),
  status: Type.Enum(['success', 'failure', 'in_progress']),
  result: Type.Optional(Type.String({ description: 'A human-readable summary.' })),
  metadata: Type.Record(Type.String(), Type.Unknown(), {
    description:
      'May hold `objects`, `progress`, `readType`, the read window, `retryOf` (the failed operation a retry runs again), and `temporal` (`workflowId` and `url` of its run in the Temporal UI); a tool call holds `tool`, `arguments` (without secrets), `sessionId` and `transport`.',
  }),
  createTime: DateTime,
  updateTime: DateTime,
});
export type OperationView = Static<typeof OperationSchema>;

export const OperationPageSchema = Paginated(OperationSchema);

export const OperationLogSchema = Type.Object({
  timestamp: DateTime,
  severity: Type.Enum(['DEBUG', 'INFO', 'WARN', 'ERROR']),
  message: Type.Object({
    msg: Type.String(),
    error: Type.Optional(Type.String()),
    operation_id: Uuid,
    details: Type.Record(Type.String(), Type.String(), {
      description:
        'Context, each value a string (JSON for structured values), e.g. `request`: `{"method":"GET","url":…}` of a provider request (never with credentials).',
    }),
  }),
});
export type OperationLogView = Static<typeof OperationLogSchema>;

export const InstallationOperationsParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  integrationId: Type.String({ minLength: 1, description: 'The integration’s ID or name.' }),
  installationId: Type.String({ minLength: 1 }),
});

export const OperationParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  operationId: Type.String({ minLength: 1 }),
});

export const OperationListQuery = PaginationQuery;

export const RetryResultSchema = Type.Object({
  operationId: Type.String({ format: 'uuid', description: 'The new operation that runs the retry.' }),
  retryOf: Type.String({ format: 'uuid', description: 'The failed operation it retries.' }),
  actionType: Type.Enum(['read', 'write']),
});
