import Type, { type TSchema } from 'typebox';

/** Marks a field the server sets: shown in responses (`readOnly` in OpenAPI), refused in an update mask. */
export const readOnly = <T extends TSchema>(schema: T): T => ({ ...schema, readOnly: true });

export const Uuid = Type.String({ format: 'uuid', description: 'A UUID.' });
export const DateTime = Type.String({ format: 'date-time', description: 'An ISO 8601 timestamp.' });
export const NonEmptyString = Type.String({ minLength: 1 });

/** The `{projectIdOrName}` segment every project-scoped path starts with. */
export const ProjectIdOrName = Type.String({ minLength: 1, description: 'The project ID or name.' });

export const ProjectPathParams = Type.Object({ projectIdOrName: ProjectIdOrName });

/** `updateMask` names the fields a PATCH changes; nothing else is touched. */
export const UpdateMask = Type.Array(Type.String({ minLength: 1 }), {
  minItems: 1,
  description: 'Dotted paths of the fields to change.',
});

export const ProblemIssueSchema = Type.Object({
  type: Type.Optional(Type.String()),
  title: Type.Optional(Type.String()),
  detail: Type.String(),
  in: Type.String({ description: 'path, query, body or header' }),
  name: Type.String({ description: 'The offending property.' }),
  value: Type.Optional(Type.Unknown()),
});

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    href: Type.Optional(Type.String()),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.Optional(Type.String()),
    instance: Type.String({ description: 'The request id of the failed request.' }),
    issues: Type.Optional(Type.Array(ProblemIssueSchema)),
    remedy: Type.Optional(Type.String()),
    retryable: Type.Optional(Type.Boolean()),
    retryAfter: Type.Optional(Type.Integer()),
    requestId: Type.Optional(Type.String()),
    time: Type.Optional(DateTime),
  },
  { description: 'RFC 9457 problem details.' },
);

/** Cursor-paginated lists share this envelope. */
export function Paginated<T extends ReturnType<typeof Type.Object>>(item: T) {
  return Type.Object({
    results: Type.Array(item),
    pagination: Type.Object({ done: Type.Boolean(), nextPageToken: Type.Optional(Type.String()) }),
  });
}

export const PaginationQuery = Type.Object({
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 200 })),
  pageToken: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
});
