import { randomUUID } from 'node:crypto';
import Type from 'typebox';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError, type ProblemIssue } from '../core/problem.js';
import { isUuid } from '../core/ids.js';
import type { Config } from '../config.js';
import { decryptJson, encryptJson } from '../crypto/secrets.js';
import { DestinationEntity, type Destination } from '../db/entities/operation.js';
import { generateSigningSecret } from '../delivery/signing.js';
import type { DestinationPolicy } from '../delivery/url-guard.js';
import type { DestinationTarget } from '../delivery/destination-type.js';
import type { DestinationView } from '../schemas/destinations.js';
import { assertDestinationUnused } from './destination-users.js';
import { checkDestinationUrl, headerIssues, signingSecretIssues } from './webhook-input.js';
import { schemaIssues } from '../core/validation.js';
import { destinationType } from '../delivery/registry.js';
import { webhookType } from '../delivery/types/webhook.js';
import {
  applyTypedPatch,
  createTypedDestination,
  typeOf,
  updatableTypedFields,
  type TypedDestinationInput,
} from './typed-destinations.js';

/**
 * Webhook destinations: where read results and notifications go. The signing secrets and the
 * header values (often credentials) live only in `secretsEncrypted`; the `headers` column keeps the
 * header names, so listing destinations never decrypts anything.
 */

export interface SigningSecretEntry {
  secret: string;
  createTime: string;
  /** Set when the secret was rotated out: it keeps signing until then. */
  expireTime?: string;
}

export interface DestinationSecrets {
  /** The current secret first, then rotated-out ones still in their grace period (webhooks). */
  signingSecrets: SigningSecretEntry[];
  /** A webhook's header values. */
  headers: Record<string, string>;
  /** The `secrets` of types other than webhook, as their schema took them. */
  values?: Record<string, string>;
}

/** What the API shows instead of a header value when secrets are not asked for. */
export const REDACTED = '<redacted>';

export function openSecrets(destination: Pick<Destination, 'secretsEncrypted'>): DestinationSecrets {
  return decryptJson<DestinationSecrets>(destination.secretsEncrypted);
}

function sealSecrets(destination: Destination, secrets: DestinationSecrets): void {
  destination.secretsEncrypted = encryptJson(secrets);
  destination.headers = Object.fromEntries(Object.keys(secrets.headers).map((name) => [name, REDACTED]));
}

/** Every secret a delivery made at `now` is signed with: the current one and those still in grace. */
export function validSigningSecrets(secrets: DestinationSecrets, now: Date): string[] {
  return secrets.signingSecrets
    .filter((entry) => !entry.expireTime || Date.parse(entry.expireTime) > now.getTime())
    .map((entry) => entry.secret);
}

/** A new current secret; the old one keeps signing for the grace period, expired ones are dropped. */
export function rotateSigningSecret(
  secrets: DestinationSecrets,
  now: Date,
  graceMs: number,
  replacement = generateSigningSecret(),
): DestinationSecrets {
  const expireTime = new Date(now.getTime() + graceMs).toISOString();
  const retired = secrets.signingSecrets
    .map((entry) => (entry.expireTime ? entry : { ...entry, expireTime }))
    .filter((entry) => Date.parse(entry.expireTime!) > now.getTime());
  return {
    ...secrets,
    signingSecrets: [{ secret: replacement, createTime: now.toISOString() }, ...retired],
  };
}

/** What a type's `send` gets: settings and the credentials valid at `now`. */
export function destinationTarget(
  destination: Destination,
  secrets: DestinationSecrets,
  now: Date,
): DestinationTarget {
  const version = `${destination.updateTime.getTime()}`;
  if (destination.type === 'webhook') {
    return {
      destinationId: destination.id,
      version,
      metadata: { url: destination.url, headers: secrets.headers },
      secrets: { signingSecrets: validSigningSecrets(secrets, now) },
    };
  }
  return {
    destinationId: destination.id,
    version,
    metadata: { ...destination.metadata },
    secrets: { ...secrets.values },
  };
}

export function destinationView(destination: Destination, secrets?: DestinationSecrets): DestinationView {
  return {
    id: destination.id,
    projectId: destination.projectId,
    name: destination.name,
    type: destination.type,
    ...(destination.type === 'webhook'
      ? {
          metadata: {
            url: destination.url,
            headers: secrets ? { ...secrets.headers } : { ...destination.headers },
          },
          // `webhookSigningKey` is the public API's name for the same secret.
          ...(secrets && {
            secrets: {
              signingSecret: secrets.signingSecrets[0].secret,
              webhookSigningKey: secrets.signingSecrets[0].secret,
            },
          }),
        }
      : {
          metadata: secrets ? { ...destination.metadata } : shownMetadata(destination),
          ...(secrets && { secrets: { ...secrets.values } }),
        }),
    disabled: destination.disabledTime !== undefined && destination.disabledTime !== null,
    ...(destination.disabledTime && { disableTime: destination.disabledTime.toISOString() }),
    createTime: destination.createTime.toISOString(),
    updateTime: destination.updateTime.toISOString(),
  };
}

/** A typed destination's settings as shown without its secrets: a credential-bearing setting redacted. */
function shownMetadata(destination: Destination): Record<string, unknown> {
  const metadata = { ...destination.metadata };
  return destinationType(destination.type)?.redact?.(metadata) ?? metadata;
}

export function destinationPolicy(settings: Pick<Config, 'allowPrivateDestinations'>): DestinationPolicy {
  return { allowPrivate: settings.allowPrivateDestinations };
}

export async function findDestination(
  em: EntityManager,
  projectId: string,
  nameOrId: string,
): Promise<Destination> {
  const destination = await em.findOne(
    DestinationEntity,
    isUuid(nameOrId)
      ? { projectId, $or: [{ id: nameOrId }, { name: nameOrId }] }
      : { projectId, name: nameOrId },
  );
  if (!destination) throw ProblemError.notFound(`Destination "${nameOrId}" was not found.`);
  return destination;
}

async function assertNameFree(em: EntityManager, projectId: string, name: string, exceptId?: string) {
  const taken = await em.findOne(DestinationEntity, { projectId, name });
  if (taken && taken.id !== exceptId) {
    throw ProblemError.conflict(`A destination named "${name}" already exists in this project.`);
  }
}

export interface WebhookInput {
  name: string;
  type: 'webhook';
  metadata: { url: string; headers?: Record<string, string> };
  /** `webhookSigningKey` is the public API's name for `signingSecret`. */
  secrets?: { signingSecret?: string; webhookSigningKey?: string };
}

/** Any type's create body; the type's schemas check `metadata` and `secrets`. */
export type DestinationInput = WebhookInput | TypedDestinationInput;

/** The webhook's fields checked against its schemas (create), names prefixed as the request has them. */
function webhookShapeIssues(input: { metadata?: unknown; secrets?: unknown }, prefix = ''): ProblemIssue[] {
  return [
    ...schemaIssues(webhookType.metadata, input.metadata, 'body', `${prefix}metadata`),
    ...(input.secrets === undefined
      ? []
      : schemaIssues(webhookType.secrets, input.secrets, 'body', `${prefix}secrets`)),
  ];
}

export async function createDestination(
  em: EntityManager,
  projectId: string,
  given: DestinationInput,
  policy: DestinationPolicy,
): Promise<{ destination: Destination; secrets: DestinationSecrets }> {
  if (given.type !== 'webhook') {
    await assertNameFree(em, projectId, given.name);
    const destination = await createTypedDestination(em, projectId, given, policy);
    return { destination, secrets: openSecrets(destination) };
  }
  const shape = webhookShapeIssues(given);
  if (shape.length) throw ProblemError.invalid(shape);
  const input = given as WebhookInput;
  const signingSecret = input.secrets?.signingSecret ?? input.secrets?.webhookSigningKey;
  const issues = [
    ...headerIssues(input.metadata.headers ?? {}, 'metadata.headers'),
    ...signingSecretIssues(
      signingSecret,
      input.secrets?.signingSecret === undefined && signingSecret !== undefined
        ? 'secrets.webhookSigningKey'
        : 'secrets.signingSecret',
    ),
  ];
  if (input.secrets?.signingSecret !== undefined && input.secrets.webhookSigningKey !== undefined) {
    issues.push({
      in: 'body',
      name: 'secrets.webhookSigningKey',
      detail: 'secrets.webhookSigningKey names the same secret as secrets.signingSecret; give one of them',
    });
  }
  if (issues.length) throw ProblemError.invalid(issues);
  await checkDestinationUrl(input.metadata.url, 'metadata.url', policy);
  await assertNameFree(em, projectId, input.name);
  const now = new Date();
  const secrets: DestinationSecrets = {
    signingSecrets: [{ secret: signingSecret ?? generateSigningSecret(), createTime: now.toISOString() }],
    headers: { ...input.metadata.headers },
  };
  const destination = em.create(DestinationEntity, {
    id: randomUUID(),
    projectId,
    name: input.name,
    type: input.type,
    url: input.metadata.url,
    headers: {},
    metadata: {},
    secretsEncrypted: '',
    createTime: now,
    updateTime: now,
  });
  sealSecrets(destination, secrets);
  return { destination, secrets };
}

/** Issues a new signing secret; the old one keeps signing for FERRY_SECRET_ROTATION_GRACE_SECONDS. */
export function rotateDestinationSecret(
  destination: Destination,
  graceMs: Config['delivery']['secretRotationGraceMs'],
  now = new Date(),
): DestinationSecrets {
  if (destination.type !== 'webhook') {
    throw ProblemError.invalid([
      {
        in: 'query',
        name: 'rotate',
        detail: `a ${destination.type} destination has no signing secret to rotate`,
      },
    ]);
  }
  const secrets = rotateSigningSecret(openSecrets(destination), now, graceMs);
  sealSecrets(destination, secrets);
  destination.updateTime = now;
  return secrets;
}

export interface DestinationPatch {
  name?: string;
  metadata?: { url?: string; headers?: Record<string, string> };
  /** `webhookSigningKey` is the public API's name for `signingSecret`, in the mask as in the body. */
  secrets?: { signingSecret?: string; webhookSigningKey?: string };
  disabled?: boolean;
}

export const updatableDestinationFields = [
  'name',
  'metadata',
  'metadata.url',
  'metadata.headers',
  'secrets.signingSecret',
  'secrets.webhookSigningKey',
  'disabled',
] as const;

function valueAt(patch: DestinationPatch, path: string): unknown {
  return path.split('.').reduce<unknown>((value, key) => (value as Record<string, unknown>)?.[key], patch);
}

/**
 * Applies the fields named in `updateMask`. Re-enabling (`disabled: false`) also forgets the run of
 * failures that disabled it; a new `secrets.signingSecret` replaces the current one at once.
 */
/** A webhook's patch checked against its schemas: every field optional, unknown ones refused. */
function webhookPatchIssues(patch: DestinationPatch): ProblemIssue[] {
  return [
    ...(patch.metadata === undefined
      ? []
      : schemaIssues(Type.Partial(webhookType.metadata), patch.metadata, 'body', 'destination.metadata')),
    ...(patch.secrets === undefined
      ? []
      : schemaIssues(webhookType.secrets, patch.secrets, 'body', 'destination.secrets')),
  ];
}

/** The PATCH of a type other than webhook: the mask names `metadata.<field>` and `secrets.<field>`. */
async function updateTypedDestination(
  em: EntityManager,
  destination: Destination,
  mask: string[],
  patch: DestinationPatch,
  policy: DestinationPolicy,
): Promise<DestinationSecrets> {
  const updatable = updatableTypedFields(typeOf(destination));
  const refused = mask.filter((field) => !updatable.includes(field));
  if (refused.length) {
    throw ProblemError.invalid(
      refused.map((field) => ({
        in: 'body' as const,
        name: 'updateMask',
        value: field,
        detail: `"${field}" cannot be updated; updatable fields: ${updatable.join(', ')}`,
      })),
    );
  }
  for (const field of ['name', 'disabled'] as const) {
    if (mask.includes(field) && patch[field] === undefined) {
      throw ProblemError.invalid([
        { in: 'body', name: `destination.${field}`, detail: `"${field}" is in updateMask but missing` },
      ]);
    }
  }
  const secrets = openSecrets(destination);
  if (mask.some((field) => /^(metadata|secrets)(\.|$)/.test(field))) {
    await applyTypedPatch(destination, secrets.values ?? {}, mask, patch, policy);
  }
  if (mask.includes('name') && patch.name !== destination.name) {
    await assertNameFree(em, destination.projectId, patch.name!, destination.id);
    await assertDestinationUnused(em, destination, 'rename');
    destination.name = patch.name!;
  }
  if (mask.includes('disabled')) setDisabled(destination, patch.disabled!, new Date());
  destination.updateTime = new Date();
  return openSecrets(destination);
}

/** Disabling keeps the first disable time; re-enabling also forgets the run of failures. */
function setDisabled(destination: Destination, disabled: boolean, now: Date): void {
  // MikroORM writes NULL for null, while undefined would leave the column as it was.
  destination.disabledTime = disabled ? (destination.disabledTime ?? now) : (null as never);
  if (!disabled) destination.firstFailureTime = null as never;
}

export async function updateDestination(
  em: EntityManager,
  destination: Destination,
  mask: string[],
  patch: DestinationPatch,
  policy: DestinationPolicy,
): Promise<DestinationSecrets> {
  if (destination.type !== 'webhook') return updateTypedDestination(em, destination, mask, patch, policy);
  const shape = webhookPatchIssues(patch);
  if (shape.length) throw ProblemError.invalid(shape);
  const refused = mask.filter((field) => !(updatableDestinationFields as readonly string[]).includes(field));
  const missing = mask.filter(
    (field) => !refused.includes(field) && field !== 'metadata' && valueAt(patch, field) === undefined,
  );
  const issues: ProblemIssue[] = [
    ...refused.map((field) => ({
      in: 'body' as const,
      name: 'updateMask',
      value: field,
      detail: `"${field}" cannot be updated; updatable fields: ${updatableDestinationFields.join(', ')}`,
    })),
    ...missing.map((field) => ({
      in: 'body' as const,
      name: `destination.${field}`,
      detail: `"${field}" is in updateMask but destination.${field} is missing`,
    })),
  ];
  const has = (field: string) =>
    mask.includes(field) || (field.startsWith('metadata.') && mask.includes('metadata'));
  if (mask.includes('metadata') && patch.metadata?.url === undefined) {
    issues.push({ in: 'body', name: 'destination.metadata.url', detail: 'metadata.url is required' });
  }
  if (has('metadata.headers') && patch.metadata?.headers) {
    issues.push(...headerIssues(patch.metadata.headers, 'destination.metadata.headers'));
  }
  const secretField = has('secrets.webhookSigningKey') ? 'webhookSigningKey' : 'signingSecret';
  const newSecret = patch.secrets?.[secretField];
  if (has('secrets.signingSecret') && has('secrets.webhookSigningKey')) {
    issues.push({
      in: 'body',
      name: 'updateMask',
      value: 'secrets.webhookSigningKey',
      detail: 'secrets.webhookSigningKey names the same secret as secrets.signingSecret; give one of them',
    });
  } else if (has(`secrets.${secretField}`)) {
    issues.push(...signingSecretIssues(newSecret, `destination.secrets.${secretField}`));
  }
  if (issues.length) throw ProblemError.invalid(issues);

  if (has('metadata.url'))
    await checkDestinationUrl(patch.metadata!.url!, 'destination.metadata.url', policy);
  if (has('name') && patch.name !== destination.name) {
    await assertNameFree(em, destination.projectId, patch.name!, destination.id);
    await assertDestinationUnused(em, destination, 'rename');
  }
  const now = new Date();
  const secrets = openSecrets(destination);
  if (has('name')) destination.name = patch.name!;
  if (has('metadata.url')) destination.url = patch.metadata!.url!;
  if (has('metadata.headers')) secrets.headers = { ...(patch.metadata?.headers ?? {}) };
  if (has(`secrets.${secretField}`)) {
    secrets.signingSecrets = [
      { secret: newSecret!, createTime: now.toISOString() },
      ...secrets.signingSecrets.slice(1),
    ];
  }
  if (has('disabled')) setDisabled(destination, patch.disabled!, now);
  sealSecrets(destination, secrets);
  destination.updateTime = now;
  return secrets;
}
