import { validationError, type FieldProblem } from './errors.js';
import type { FieldDefinition, ObjectName, ObjectSchemas } from './schema.js';

const isoDateTime = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const email = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Parses an ISO 8601 date or date-time into epoch milliseconds; undefined when it is not one. */
export function parseIsoTime(value: string): number | undefined {
  if (!isoDateTime.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function checkValue(definition: FieldDefinition, value: unknown): { value?: unknown; problem?: string } {
  switch (definition.type) {
    case 'string':
      if (typeof value !== 'string') return { problem: 'Expected a string.' };
      if (definition.maxLength !== undefined && value.length > definition.maxLength) {
        return { problem: `At most ${definition.maxLength} characters.` };
      }
      if (definition.providerType === 'email' && !email.test(value)) {
        return { problem: 'Not an email address.' };
      }
      return { value };
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return { problem: 'Expected a number.' };
      if (definition.providerType === 'integer' && !Number.isInteger(value)) {
        return { problem: 'Expected an integer.' };
      }
      return { value };
    case 'boolean':
      return typeof value === 'boolean' ? { value } : { problem: 'Expected true or false.' };
    case 'datetime': {
      const ms = typeof value === 'string' ? parseIsoTime(value) : undefined;
      return ms === undefined
        ? { problem: 'Expected an ISO 8601 date-time.' }
        : { value: new Date(ms).toISOString() };
    }
    case 'enum': {
      const allowed = definition.options?.map((o) => o.value) ?? [];
      return typeof value === 'string' && allowed.includes(value)
        ? { value }
        : { problem: `Expected one of: ${allowed.join(', ')}.` };
    }
  }
}

/**
 * Checks a create or update body against the object's fields (built-in and custom) and returns the
 * normalized values. null clears an optional field. Read-only and unknown fields are rejected so
 * a caller's mapping mistakes surface instead of being dropped silently.
 */
export function validateRecordInput(
  schemas: ObjectSchemas,
  object: ObjectName,
  body: unknown,
  mode: 'create' | 'update',
): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw validationError('The request body must be a JSON object of field values.');
  }
  const problems: FieldProblem[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(body)) {
    const definition = schemas.field(object, name);
    if (!definition) {
      problems.push({ name, message: `Unknown field of ${object}.` });
    } else if (definition.readOnly) {
      problems.push({ name, message: 'This field is read-only.' });
    } else if (raw === null) {
      if (definition.required) problems.push({ name, message: 'This field is required.' });
      else values[name] = null;
    } else {
      const checked = checkValue(definition, raw);
      if (checked.problem) problems.push({ name, message: checked.problem });
      else values[name] = checked.value;
    }
  }
  if (mode === 'create') {
    for (const definition of schemas.fields(object)) {
      if (definition.required && !(definition.name in body)) {
        problems.push({ name: definition.name, message: 'This field is required.' });
      }
    }
  }
  if (problems.length) throw validationError(`The ${object} record is invalid.`, problems);
  return values;
}
