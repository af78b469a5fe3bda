import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TObject } from 'typebox';
import Value from 'typebox/value';
import { ProblemError, type ProblemIssue } from '../core/problem.js';
import { schemaIssues } from '../core/validation.js';
import { encryptJson } from '../crypto/secrets.js';
import { DestinationEntity, type Destination } from '../db/entities/operation.js';
import {
  destinationType,
  destinationTypeNames,
  UNSUPPORTED_PUBLIC_TYPES,
  type AnyDestinationType,
} from '../delivery/registry.js';
import type { DestinationPolicy } from '../delivery/url-guard.js';

/**
 * Destinations of every type but webhook (whose signing secrets and headers have their own rules,
 * in destinations.ts): `metadata` checked against the type's schema and kept as given, `secrets`
 * checked the same way and kept only encrypted. Nothing here knows one type from another.
 */

/** The type named in a request, or a 400 naming `type` and the types Ferry supports. */
export function requestedType(name: string, field = 'type'): AnyDestinationType {
  const type = destinationType(name);
  if (type) return type;
  const supported = destinationTypeNames().join(', ');
  const known = (UNSUPPORTED_PUBLIC_TYPES as readonly string[]).includes(name);
  throw ProblemError.invalid([
    {
      in: 'body',
      name: field,
      value: name,
      detail: known
        ? `Ferry cannot deliver to "${name}" destinations; supported types: ${supported}`
        : `"${name}" is not a destination type; supported types: ${supported}`,
    },
  ]);
}

/** The object with the schema's defaults filled in (e.g. `storageClass`), checked and named from `prefix`. */
function checked(schema: TObject, value: unknown, prefix: string): ProblemIssue[] {
  return schemaIssues(schema, value ?? {}, 'body', prefix);
}

function withDefaults(schema: TObject, value: Record<string, unknown>): Record<string, unknown> {
  return Value.Default(schema, structuredClone(value)) as Record<string, unknown>;
}

/** Validates a type's metadata and secrets the way create and update both need; throws a 400. */
async function assertValid(
  type: AnyDestinationType,
  metadata: Record<string, unknown>,
  secrets: Record<string, unknown>,
  prefix: string,
  policy: DestinationPolicy,
): Promise<void> {
  const issues = [
    ...checked(type.metadata, metadata, `${prefix}metadata`),
    ...checked(type.secrets, secrets, `${prefix}secrets`),
  ];
  if (issues.length) throw ProblemError.invalid(issues);
  const more = (await type.check?.(metadata, secrets, policy)) ?? [];
  if (more.length) {
    throw ProblemError.invalid(more.map((issue) => ({ ...issue, name: `${prefix}${issue.name}` })));
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sealTyped(destination: Destination, values: Record<string, string>): void {
  destination.secretsEncrypted = encryptJson({ signingSecrets: [], headers: {}, values });
}

export interface TypedDestinationInput {
  name: string;
  type: string;
  metadata?: unknown;
  secrets?: unknown;
}

/** A new destination of a type other than webhook, not yet flushed; the name is checked by the caller. */
export async function createTypedDestination(
  em: EntityManager,
  projectId: string,
  input: TypedDestinationInput,
  policy: DestinationPolicy,
): Promise<Destination> {
  const type = requestedType(input.type);
  const notObjects: ProblemIssue[] = [];
  for (const field of ['metadata', 'secrets'] as const) {
    const value = input[field];
    if (value !== undefined && !isObject(value)) {
      notObjects.push({ in: 'body', name: field, detail: `${field} must be an object` });
    }
  }
  if (notObjects.length) throw ProblemError.invalid(notObjects);
  const metadata = withDefaults(type.metadata, (input.metadata as Record<string, unknown>) ?? {});
  const secrets = (input.secrets as Record<string, unknown>) ?? {};
  await assertValid(type, metadata, secrets, '', policy);
  const now = new Date();
  const destination = em.create(DestinationEntity, {
    id: randomUUID(),
    projectId,
    name: input.name,
    type: type.type,
    url: type.describe(metadata),
    headers: {},
    metadata,
    secretsEncrypted: '',
    createTime: now,
    updateTime: now,
  });
  sealTyped(destination, secrets as Record<string, string>);
  return destination;
}

/** The fields a type's PATCH can name: `metadata`, `secrets`, and each of their public fields. */
export function updatableTypedFields(type: AnyDestinationType): string[] {
  return [
    'name',
    'disabled',
    'metadata',
    ...Object.keys(type.metadata.properties).map((field) => `metadata.${field}`),
    'secrets',
    ...Object.keys(type.secrets.properties).map((field) => `secrets.${field}`),
  ];
}

/**
 * Applies the mask's `metadata…` and `secrets…` paths: a path in the mask takes the body's value,
 * or is cleared when the body leaves it out (an optional field back to its default; a required
 * one is then a 400 naming it). The result is checked whole, as create checks it.
 */
export async function applyTypedPatch(
  destination: Destination,
  current: Record<string, string>,
  mask: readonly string[],
  patch: { metadata?: unknown; secrets?: unknown },
  policy: DestinationPolicy,
): Promise<void> {
  const type = requestedType(destination.type);
  const metadata = mergeMasked(destination.metadata, patch.metadata, mask, 'metadata');
  const secrets = mergeMasked(current, patch.secrets, mask, 'secrets');
  const filled = withDefaults(type.metadata, metadata);
  await assertValid(type, filled, secrets, 'destination.', policy);
  destination.metadata = filled;
  destination.url = type.describe(filled);
  sealTyped(destination, secrets as Record<string, string>);
}

function mergeMasked(
  current: Record<string, unknown>,
  given: unknown,
  mask: readonly string[],
  field: 'metadata' | 'secrets',
): Record<string, unknown> {
  const body = isObject(given) ? given : {};
  if (mask.includes(field)) return { ...body };
  const merged = { ...current };
  for (const path of mask) {
    if (!path.startsWith(`${field}.`)) continue;
    const key = path.slice(field.length + 1);
    if (body[key] === undefined) delete merged[key];
    else merged[key] = body[key];
  }
  return merged;
}
