import type { CursorCodec } from './cursor.js';
import { validationError, type FieldProblem } from './errors.js';
import type { SandboxRecord } from './data.js';
import type { ObjectName, ObjectSchemas } from './schema.js';
import type { FieldEquals, ListQuery, Tombstone } from './store.js';
import { parseIsoTime } from './validation.js';

export interface ParsedListQuery extends ListQuery {
  fields?: string[];
}

function singleParam(
  query: Record<string, unknown>,
  name: string,
  problems: FieldProblem[],
): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') {
    problems.push({ name, message: 'Give this parameter once.' });
    return undefined;
  }
  return value;
}

function timeParam(
  query: Record<string, unknown>,
  name: string,
  problems: FieldProblem[],
): number | undefined {
  const raw = singleParam(query, name, problems);
  if (raw === undefined) return undefined;
  const ms = parseIsoTime(raw);
  if (ms === undefined) problems.push({ name, message: 'An ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z.' });
  return ms;
}

/** The updatedSince (inclusive) / updatedUntil (exclusive) window shared by list and count. */
export function parseWindow(query: Record<string, unknown>): { since?: number; until?: number } {
  const problems: FieldProblem[] = [];
  const since = timeParam(query, 'updatedSince', problems);
  const until = timeParam(query, 'updatedUntil', problems);
  if (problems.length) throw validationError('Invalid query parameters.', problems);
  return { since, until };
}

/** `where`: a JSON array of `{field, value}`, records whose field equals the value (a search). */
function whereParam(
  raw: string | undefined,
  object: ObjectName,
  schemas: ObjectSchemas,
  problems: FieldProblem[],
): FieldEquals[] | undefined {
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  const valid =
    Array.isArray(parsed) &&
    parsed.every(
      (item) =>
        item !== null &&
        typeof item === 'object' &&
        typeof (item as FieldEquals).field === 'string' &&
        'value' in item,
    );
  if (!valid) {
    problems.push({ name: 'where', message: 'A JSON array of {"field": name, "value": value}.' });
    return undefined;
  }
  const where = parsed as FieldEquals[];
  for (const { field } of where) {
    if (!schemas.field(object, field)) problems.push({ name: 'where', message: `Unknown field "${field}".` });
  }
  return where;
}

/**
 * limit, cursor, updatedSince, updatedUntil, fields, includeDeleted, where. A cursor carries the filters
 * of the listing it continues, so later pages need only the cursor (and may repeat the filters).
 */
export function parseListQuery(
  query: Record<string, unknown>,
  object: ObjectName,
  schemas: ObjectSchemas,
  cursors: CursorCodec,
): ParsedListQuery {
  const problems: FieldProblem[] = [];
  const rawLimit = singleParam(query, 'limit', problems);
  const limit = rawLimit === undefined ? 100 : Number(rawLimit);
  if (!/^\d+$/.test(rawLimit ?? '100') || limit < 1 || limit > 1000) {
    problems.push({ name: 'limit', message: 'An integer from 1 to 1000.' });
  }
  const since = timeParam(query, 'updatedSince', problems);
  const until = timeParam(query, 'updatedUntil', problems);
  const includeDeletedRaw = singleParam(query, 'includeDeleted', problems);
  if (includeDeletedRaw !== undefined && includeDeletedRaw !== 'true' && includeDeletedRaw !== 'false') {
    problems.push({ name: 'includeDeleted', message: 'true or false.' });
  }
  const rawFields = singleParam(query, 'fields', problems);
  const fields = rawFields
    ?.split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  for (const name of fields ?? []) {
    if (!schemas.field(object, name)) problems.push({ name: 'fields', message: `Unknown field "${name}".` });
  }
  const where = whereParam(singleParam(query, 'where', problems), object, schemas, problems);
  const cursor = singleParam(query, 'cursor', problems);
  if (problems.length) throw validationError('Invalid query parameters.', problems);
  const parsed: ParsedListQuery = {
    limit,
    since,
    until,
    includeDeleted: includeDeletedRaw === 'true',
    fields,
    ...(where && { where }),
  };
  if (cursor !== undefined) {
    const state = cursors.decode(cursor, object);
    Object.assign(parsed, {
      after: state.after,
      since: state.since,
      until: state.until,
      includeDeleted: state.includeDeleted,
      where: state.where,
    });
  }
  return parsed;
}

/** Keeps the selected fields (null when a record lacks one); id and updatedAt always stay. */
export function project(
  value: SandboxRecord | Tombstone,
  fields: string[] | undefined,
): Record<string, unknown> {
  const isTombstone = !('createdAt' in value); // records always have createdAt
  if (!fields || isTombstone) return value as Record<string, unknown>;
  const record = value as SandboxRecord;
  const projected: Record<string, unknown> = { id: record.id, updatedAt: record.updatedAt };
  for (const name of fields) projected[name] = record[name] ?? null;
  return projected;
}
