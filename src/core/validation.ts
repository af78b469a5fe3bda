import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import Value, { DecodeUnsafe, HasCodec } from 'typebox/value';
import Format from 'typebox/format';
import { ProblemError, type ProblemIssue } from './problem.js';
import { looksLike } from './similar-names.js';

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

/** The weight of one branch's errors: a branch whose very type the value is not ranks last. */
function branchWeight(branchErrors: SchemaError[], instancePath: string): number {
  const mismatched = branchErrors.some(
    (error) => error.instancePath === instancePath && (error.keyword === 'type' || error.keyword === 'const'),
  );
  const count = branchErrors.reduce(
    (sum, error) =>
      error.keyword === 'boolean'
        ? sum
        : sum + (error.keyword === 'required' ? (error.params.requiredProperties as string[]).length : 1),
    0,
  );
  return (mismatched ? 1_000 : 0) + count;
}

/**
 * A union's errors come from every branch it tried; only the branch the value came closest to
 * (its type matched, fewest errors) says what the author meant. The others' errors are dropped,
 * so one typo is one issue, not four. Unions of constants (enums) keep every branch: the issue lists
 * the allowed values.
 */
function closestBranches(errors: SchemaError[]): SchemaError[] {
  let kept = errors;
  const unions = errors
    .filter((error) => error.keyword === 'anyOf')
    .sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  for (const union of unions) {
    if (!kept.includes(union)) continue;
    const prefix = `${union.schemaPath}/anyOf/`;
    const branches = new Map<string, SchemaError[]>();
    for (const error of kept) {
      if (!error.schemaPath.startsWith(prefix)) continue;
      const branch = error.schemaPath.slice(prefix.length).split('/')[0];
      branches.set(branch, [...(branches.get(branch) ?? []), error]);
    }
    const all = [...branches.values()].flat();
    if (branches.size < 2 || all.every((error) => error.keyword === 'const')) continue;
    const [best] = [...branches.entries()].sort(
      ([a, aErrors], [b, bErrors]) =>
        branchWeight(aErrors, union.instancePath) - branchWeight(bErrors, union.instancePath) ||
        Number(a) - Number(b),
    );
    if (branchWeight(best[1], union.instancePath) >= 1_000) continue; // no branch fits: say so
    kept = kept.filter((error) => error === union || !all.includes(error) || best[1].includes(error));
  }
  return kept;
}

/**
 * An unknown property beside a missing one it nearly spells is one mistake: said once, on the
 * unknown one (where the author typed), with the name meant.
 */
function joinTypos(issues: Map<string, ProblemIssue>): void {
  const parentOf = (name: string) => name.replace(/(\.[^.[\]]+|\[\d+\])$/, '');
  const leafOf = (name: string) => name.slice(parentOf(name).length).replace(/^\./, '');
  const unknown = [...issues.values()].filter((issue) =>
    issue.detail.endsWith(' is not an allowed property'),
  );
  for (const issue of unknown) {
    const missing = [...issues.values()].find(
      (other) =>
        other.detail.endsWith(' is required') &&
        parentOf(other.name) === parentOf(issue.name) &&
        looksLike(leafOf(issue.name), leafOf(other.name)),
    );
    if (!missing) continue;
    issues.delete(missing.name);
    issue.detail = `${issue.detail}; did you mean ${leafOf(missing.name)}?`;
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
  const errors = closestBranches([...validator.Errors(value)] as SchemaError[]);
  const issues = new Map<string, ProblemIssue>();
  const add = (pointer: string, detail: string, schemaPath: string) => {
    const name = [prefix, pointerToName(pointer)].filter(Boolean).join('.') || location;
    if (issues.has(name)) return;
    const echoed = isWriteOnly(schema, schemaPath) ? undefined : valueAt(value, pointer);
    issues.set(name, { in: location, name, value: echoed, detail: `${name} ${detail}` });
  };
  // Leaf errors first: an anyOf failure is only reported when nothing more precise was said (at
  // its value or inside it).
  const ordered = [...errors].sort((a, b) => Number(a.keyword === 'anyOf') - Number(b.keyword === 'anyOf'));
  const saidInside = (pointer: string) =>
    ordered.some(
      (other) =>
        other.keyword !== 'anyOf' &&
        other.keyword !== 'boolean' &&
        other.instancePath.startsWith(pointer) &&
        (other.instancePath !== pointer ||
          other.keyword === 'required' ||
          other.keyword === 'additionalProperties'),
    );
  for (const error of ordered) {
    if (
      error.keyword === 'anyOf' &&
      saidInside(error.instancePath) &&
      !errors.some((other) => other.instancePath === error.instancePath && other.keyword === 'const')
    )
      continue;
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
  joinTypos(issues);
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
