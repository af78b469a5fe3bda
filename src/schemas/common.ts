import Type, { type TSchema, type TStringOptions } from 'typebox';
import { canonicalName } from '../core/names.js';

/** Marks a field the server sets: shown in responses (`readOnly` in OpenAPI), refused in an update mask. */
export const readOnly = <T extends TSchema>(schema: T): T => ({ ...schema, readOnly: true });

/** A secret the caller sends (a password, a client secret, a key): never returned, nor echoed in a 400's issues. */
export const Secret = (options: Parameters<typeof Type.String>[0] = {}) =>
  Type.String({ ...options, writeOnly: true });

/**
 * A name compared for uniqueness, or that looks one up: accepted in any Unicode form and decoded to
 * NFC (`parseWith`), so every name is stored, compared and answered in one form (core/names.ts).
 */
export const NfcName = (options: TStringOptions = {}) =>
  Type.Codec(
    Type.String({
      ...options,
      description: [options.description, 'Compared and kept in Unicode NFC.'].filter(Boolean).join(' '),
    }),
  )
    .Decode((name: string) => canonicalName(name))
    .Encode((name: string) => name);

export const Uuid = Type.String({ format: 'uuid', description: 'A UUID.' });
export const DateTime = Type.String({ format: 'date-time', description: 'An ISO 8601 timestamp.' });
export const NonEmptyString = Type.String({ minLength: 1 });

/** The `{projectIdOrName}` segment every project-scoped path starts with. */
export const ProjectIdOrName = Type.String({ minLength: 1, description: 'The project ID or name.' });

export const ProjectPathParams = Type.Object({ projectIdOrName: ProjectIdOrName });

/** `updateMask` names the fields a PATCH changes; nothing else is touched. */
export const UpdateMask = Type.Array(Type.String({ minLength: 1, maxLength: 1_000 }), {
  minItems: 1,
  // Each path may copy the part it changes: a bound keeps one request's work bounded.
  maxItems: 100,
  description: 'Dotted paths of the fields to change, at most 100.',
});

export const ProblemIssueSchema = Type.Object({
  type: Type.String({ description: '`about:blank`.' }),
  title: Type.String({ description: 'What kind of input is wrong, e.g. `Invalid request body`.' }),
  detail: Type.String(),
  in: Type.String({ description: 'path, query, body or header' }),
  name: Type.String({ description: 'The offending property, e.g. `metadata.url` or `batch[2].record`.' }),
  value: Type.Unknown({ description: 'The offending value; null where it is missing.' }),
});

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    href: Type.String({
      description: 'A guide to the problem type (for `about:blank`, to its HTTP status).',
    }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.Optional(Type.String()),
    instance: Type.String({
      format: 'uri',
      description: 'The failed request, as a URI: `urn:ferry:request:` and its request id.',
    }),
    issues: Type.Optional(Type.Array(ProblemIssueSchema)),
    remedy: Type.Optional(Type.String()),
    retryable: Type.Optional(Type.Boolean()),
    retryAfter: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When to retry; the Retry-After header gives the same wait in seconds.',
      }),
    ),
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
