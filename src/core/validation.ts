import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import Value, { DecodeUnsafe, HasCodec } from 'typebox/value';
import Format from 'typebox/format';
import { ProblemError, type ProblemIssue } from './problem.js';

type Location = ProblemIssue['in'];

// RFC 3339 allows a leap second (`23:59:60`) that JavaScript cannot represent: a time every reader
// downstream would take as Invalid Date is refused here, with the request.
Format.Set('date-time', (value) => Format.IsDateTime(value) && Number.isFinite(Date.parse(value)));

interface SchemaError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message: string;
}

const compiled = new WeakMap<TSchema, ReturnType<typeof Compile>>();

function compile(schema: TSchema): ReturnType<typeof Compile> {
  let validator = compiled.get(schema);
  if (!validator) {
    validator = Compile(schema);
    compiled.set(schema, validator);
  }
  return validator;
}

/** Whether a value fits its schema: a type guard, so a stored value that checked needs no cast. */
export function conforms<T extends TSchema>(schema: T, value: unknown): value is Static<T> {
  return compile(schema).Check(value);
}

/** `/latestRevision/content/read/objects/0/schedule` → `latestRevision.content.read.objects[0].schedule`. */
export function pointerToName(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

function valueAt(root: unknown, pointer: string): unknown {
  let current = root;
  for (const part of pointer.split('/').slice(1)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return current;
}

/**
 * Whether the schema at `schemaPath` (`#/properties/a/anyOf/0`), or one around it, is `writeOnly`: a
 * secret the caller sends (a key, a password, a token) that an issue names but never echoes.
 */
function isWriteOnly(schema: TSchema, schemaPath: string): boolean {
  let node: unknown = schema;
  for (const part of ['', ...schemaPath.split('/').slice(1)]) {
    if (part) node = (node as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
    if (node === null || typeof node !== 'object') return false;
    if ((node as { writeOnly?: unknown }).writeOnly === true) return true;
  }
  return false;
}

function describe(error: SchemaError): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not an allowed property';
    case 'enum':
      return `must be one of: ${(error.params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(error.params.allowedValue)}`;
    default:
      return error.message;
  }
}

/**
 * Turns TypeBox errors into the spec's issues: one per offending property, naming missing and
 * unknown properties themselves rather than their parent object.
 */
export function schemaIssues(
  schema: TSchema,
  value: unknown,
  location: Location,
  prefix = '',
): ProblemIssue[] {
  const validator = compile(schema);
  if (validator.Check(value)) return [];
  const errors = [...validator.Errors(value)] as SchemaError[];
  const issues = new Map<string, ProblemIssue>();
  const add = (pointer: string, detail: string, schemaPath: string) => {
    const name = [prefix, pointerToName(pointer)].filter(Boolean).join('.') || location;
    if (issues.has(name)) return;
    const echoed = isWriteOnly(schema, schemaPath) ? undefined : valueAt(value, pointer);
    issues.set(name, { in: location, name, value: echoed, detail: `${name} ${detail}` });
  };
  // Leaf errors first: an anyOf failure is only reported when nothing more precise was said.
  const ordered = [...errors].sort((a, b) => Number(a.keyword === 'anyOf') - Number(b.keyword === 'anyOf'));
  for (const error of ordered) {
    if (error.keyword === 'boolean') continue; // duplicate of additionalProperties
    if (error.keyword === 'required') {
      for (const property of error.params.requiredProperties as string[])
        add(`${error.instancePath}/${property}`, 'is required', error.schemaPath);
    } else if (error.keyword === 'additionalProperties') {
      for (const property of error.params.additionalProperties as string[]) {
        add(`${error.instancePath}/${property}`, 'is not an allowed property', error.schemaPath);
      }
    } else if (error.keyword === 'const' || error.keyword === 'anyOf') {
      const siblings = errors.filter(
        (other) => other.instancePath === error.instancePath && other.keyword === 'const',
      );
      const detail = siblings.length
        ? `must be one of: ${siblings.map((other) => JSON.stringify(other.params.allowedValue)).join(', ')}`
        : 'does not match any allowed shape';
      add(error.instancePath, detail, error.schemaPath);
    } else {
      add(error.instancePath, describe(error), error.schemaPath);
    }
  }
  return [...issues.values()];
}

const codecs = new WeakMap<TSchema, boolean>();

/**
 * A value that checked against its schema, with the schema's codecs applied in place (names
 * normalised to NFC: `NfcName`); a schema without codecs leaves it untouched.
 */
export function decoded<T>(schema: TSchema, value: unknown): T {
  let hasCodec = codecs.get(schema);
  if (hasCodec === undefined) {
    hasCodec = HasCodec(schema);
    codecs.set(schema, hasCodec);
  }
  return (hasCodec ? DecodeUnsafe({}, schema, value) : value) as T;
}

/** Validates and returns the typed (and decoded) value, or throws a 400 problem listing every issue. */
export function parseWith<T>(schema: TSchema, value: unknown, location: Location): T {
  const issues = schemaIssues(schema, value, location);
  if (issues.length) throw ProblemError.invalid(issues);
  return decoded<T>(schema, value);
}

/** Query and path values arrive as strings; convert them to the schema's types before checking. */
export function parseStringParams<T>(schema: TSchema, raw: Record<string, unknown>, location: Location): T {
  const converted = Value.Convert(schema, { ...raw });
  return parseWith<T>(schema, converted, location);
}
