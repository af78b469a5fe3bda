import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError, type ProblemIssue } from '../core/problem.js';
import { ConnectionEntity, type Connection } from '../db/entities/connection.js';
import { InstallationEntity } from '../db/entities/installation.js';
import { IntegrationEntity, RevisionEntity, type Integration } from '../db/entities/integration.js';
import { type Connector } from '../providers/connector.js';
import { connectorFor } from '../providers/connectors/index.js';
import { type Capability } from '../schemas/capabilities.js';
import type {
  CustomFieldDefinition,
  CustomFieldUpsertResult,
  ObjectMetadata,
} from '../schemas/object-metadata.js';
import { getProvider } from '../providers/catalog/index.js';
import { CapabilityNotSupportedError, toProblem } from '../providers/errors.js';
import type { RetryPolicy } from '../providers/http.js';
import type { IntegrationContent } from '../schemas/integration-content.js';
import { connectionTarget, findGroupConnection } from './credentials.js';
import { findGroupByRef } from './groups.js';

/**
 * Object metadata and custom fields at the provider, for one group's connection: the rules behind
 * `GET .../objects/{objectName}/metadata` and `PUT .../object-metadata`, provider- or
 * integration-scoped.
 */

/** A catalog provider name, or a 404 problem. */
export function requireProvider(name: string): string {
  const provider = getProvider(name);
  if (!provider) throw ProblemError.notFound(`Provider "${name}" is not in Ferry’s catalog.`);
  return provider.name;
}

/**
 * Retries for provider calls made while an API caller waits: fewer, and no long Retry-After
 * waits (the caller gets a retryable 502 with `retryAfter` instead).
 */
export const interactiveRetry: RetryPolicy = { maxAttempts: 3, baseDelayMs: 250, maxRetryAfterMs: 5_000 };

/** The connector of a stored connection, failing early (422) when it lacks a needed capability. */
export async function connectorOf(connection: Connection, capability?: Capability): Promise<Connector> {
  const connector = connectorFor(await connectionTarget(connection.id), { retry: interactiveRetry });
  if (capability && !connector.capabilities[capability]) {
    throw toProblem(new CapabilityNotSupportedError(connector.provider, capability));
  }
  return connector;
}

/**
 * The connection an integration uses for a group: its installation's connection when the group has
 * installed the integration, the group's connection to the provider otherwise.
 */
export async function integrationConnection(
  em: EntityManager,
  integration: Integration,
  groupRef: string,
): Promise<Connection> {
  const group = await findGroupByRef(em, integration.projectId, groupRef);
  const installation =
    group &&
    (await em.findOne(InstallationEntity, {
      projectId: integration.projectId,
      integrationId: integration.id,
      groupId: group.id,
    }));
  const connection =
    installation &&
    (await em.findOne(ConnectionEntity, { id: installation.connectionId, projectId: integration.projectId }));
  return connection ?? findGroupConnection(em, integration.projectId, groupRef, integration.provider);
}

export interface ResolvedObjectName {
  /** The provider's object name. */
  objectName: string;
  /** The integration's name for it (`mapToName`), when it maps it. */
  mappedObjectName?: string;
}

/**
 * Resolves a name that may be a read object's `mapToName` to the provider's object name. A name
 * that is some read object's own `objectName` stays as it is. A mapped name that several read
 * objects give to different provider objects is ambiguous: 400.
 */
export function resolveObjectName(contents: IntegrationContent[], name: string): ResolvedObjectName {
  const readObjects = contents.flatMap((content) => content.read?.objects ?? []);
  const own = readObjects.find((object) => object.objectName === name);
  if (own) return { objectName: name, ...(own.mapToName && { mappedObjectName: own.mapToName }) };
  const targets = [
    ...new Set(readObjects.filter((object) => object.mapToName === name).map((o) => o.objectName)),
  ];
  if (targets.length > 1) {
    throw ProblemError.invalid([
      {
        in: 'path',
        name: 'objectName',
        value: name,
        detail: `"${name}" is the mapped name of several provider objects (${targets.join(', ')}); use the provider's object name.`,
      },
    ]);
  }
  return targets.length === 1 ? { objectName: targets[0], mappedObjectName: name } : { objectName: name };
}

/** The latest revision contents of the project's integrations with this provider, for mapped names. */
export async function providerIntegrationContents(
  em: EntityManager,
  projectId: string,
  provider: string,
): Promise<IntegrationContent[]> {
  const integrations = await em.find(IntegrationEntity, { projectId, provider });
  if (integrations.length === 0) return [];
  const revisions = await em.find(RevisionEntity, {
    id: { $in: integrations.map((i) => i.latestRevisionId) },
  });
  return revisions.map((revision) => revision.content);
}

/** The spec's object metadata from the provider, optionally without read-only fields. */
export async function describeObject(
  connector: Connector,
  name: ResolvedObjectName,
  options: { excludeReadOnly?: boolean } = {},
): Promise<ObjectMetadata> {
  let metadata;
  try {
    metadata = await connector.listObjectMetadata(name.objectName);
  } catch (error) {
    throw toProblem(error);
  }
  const fields = Object.fromEntries(
    Object.entries(metadata.fields).filter(([, field]) => !(options.excludeReadOnly && field.readOnly)),
  );
  return {
    name: metadata.name,
    ...(metadata.displayName !== undefined && { displayName: metadata.displayName }),
    ...(name.mappedObjectName !== undefined && { mappedObjectName: name.mappedObjectName }),
    fields,
  };
}

const selectTypes = new Set(['singleSelect', 'multiSelect']);
const stringTypes = new Set(['string', 'singleSelect', 'multiSelect']);
const numericTypes = new Set(['int', 'float']);

/** Rules across the properties of custom-field definitions, which the schema alone cannot say. */
export function customFieldIssues(fields: Record<string, CustomFieldDefinition[]>): ProblemIssue[] {
  const issues: ProblemIssue[] = [];
  const issue = (name: string, value: unknown, detail: string) =>
    issues.push({ in: 'body', name, value, detail: `${name} ${detail}` });
  if (Object.keys(fields).length === 0) issue('fields', fields, 'must name at least one object');
  for (const [objectName, definitions] of Object.entries(fields)) {
    const seen = new Set<string>();
    definitions.forEach((definition, index) => {
      const at = `fields.${objectName}[${index}]`;
      const { valueType, stringOptions, numericOptions } = definition;
      if (seen.has(definition.fieldName)) {
        issue(`${at}.fieldName`, definition.fieldName, `repeats a field of ${objectName}`);
      }
      seen.add(definition.fieldName);
      if (stringOptions && !stringTypes.has(valueType)) {
        issue(
          `${at}.stringOptions`,
          stringOptions,
          `applies only to string, singleSelect and multiSelect fields`,
        );
      }
      if (numericOptions && !numericTypes.has(valueType)) {
        issue(`${at}.numericOptions`, numericOptions, 'applies only to int and float fields');
      }
      if (selectTypes.has(valueType) && !stringOptions?.values?.length) {
        issue(`${at}.stringOptions.values`, stringOptions?.values, `is required for a ${valueType} field`);
      }
      if (stringOptions?.valuesRestricted && !stringOptions.values?.length) {
        issue(
          `${at}.stringOptions.values`,
          stringOptions.values,
          'is required when valuesRestricted is true',
        );
      }
      const restricted = selectTypes.has(valueType) || stringOptions?.valuesRestricted;
      if (
        restricted &&
        stringOptions?.defaultValue !== undefined &&
        !stringOptions.values?.includes(stringOptions.defaultValue)
      ) {
        issue(`${at}.stringOptions.defaultValue`, stringOptions.defaultValue, 'must be one of the values');
      }
      if (
        numericOptions?.min !== undefined &&
        numericOptions.max !== undefined &&
        numericOptions.min > numericOptions.max
      ) {
        issue(`${at}.numericOptions.min`, numericOptions.min, 'must not exceed max');
      }
      if (valueType === 'int' && numericOptions?.scale) {
        issue(`${at}.numericOptions.scale`, numericOptions.scale, 'must be 0 for an int field');
      }
    });
  }
  return issues;
}

/**
 * Creates or updates custom fields, object by object. Each object's fields go to the provider in
 * one call; a provider failure stops there (objects before it stay applied, and an upsert can be
 * repeated safely).
 */
export async function upsertCustomFields(
  connector: Connector,
  fields: Record<string, { objectName: string; definitions: CustomFieldDefinition[] }>,
): Promise<{ success: boolean; fields: Record<string, Record<string, CustomFieldUpsertResult>> }> {
  const results: Record<string, Record<string, CustomFieldUpsertResult>> = {};
  for (const [requestedName, { objectName, definitions }] of Object.entries(fields)) {
    try {
      results[requestedName] = (await connector.upsertCustomFields(objectName, definitions)).fields;
    } catch (error) {
      throw toProblem(error);
    }
  }
  return { success: true, fields: results };
}

/** The group ref of an upsert: from the body, else the query (the public API documents both). */
export function upsertGroupRef(body: { groupRef?: string }, query: { groupRef?: string }): string {
  const groupRef = body.groupRef ?? query.groupRef;
  if (!groupRef) {
    throw ProblemError.invalid([
      { in: 'body', name: 'groupRef', detail: 'groupRef is required (in the body or the query)' },
    ]);
  }
  if (body.groupRef && query.groupRef && body.groupRef !== query.groupRef) {
    throw ProblemError.invalid([
      {
        in: 'query',
        name: 'groupRef',
        value: query.groupRef,
        detail: 'groupRef differs from the body’s groupRef',
      },
    ]);
  }
  return groupRef;
}
