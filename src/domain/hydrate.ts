import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import type { Integration, Revision } from '../db/entities/integration.js';
import { logger } from '../logger.js';
import { type Connector } from '../providers/connector.js';
import { connectorFor } from '../providers/connectors/index.js';
import { type ObjectMetadata } from '../schemas/object-metadata.js';
import {
  CapabilityNotSupportedError,
  ConnectorError,
  ProviderError,
  toProblem,
} from '../providers/errors.js';
import type {
  HydratedFieldSchema,
  HydratedReadObject,
  HydratedRevisionView,
  HydratedWriteObject,
} from '../schemas/hydrate.js';
import type { Field, ReadObject } from '../schemas/integration-content.js';
import type { Static } from 'typebox';
import { findConnection } from './connections/lookups.js';
import { connectionTarget } from './credentials.js';
import { interactiveRetry } from './object-metadata.js';

/**
 * Hydrating a revision: its content, with each read object enriched by the provider's description
 * of its fields (through one connection) and each write object given a display name.
 *
 * One object the provider cannot describe (unknown object, missing scope, provider error) gets an
 * `error` and empty field lists; the others are still described. A failure of the connection
 * itself (credentials refused or not refreshable) fails the whole request, since no object could be.
 */

/** Provider calls made at once while describing a revision's objects. */
const concurrency = 4;

type Described = { metadata: ObjectMetadata } | { error: string };

/** The connector of a connection of this project and of the integration's provider. */
export async function hydrationConnector(
  em: EntityManager,
  integration: Integration,
  connectionId: string,
): Promise<Connector> {
  const connection = await findConnection(em, integration.projectId, connectionId);
  if (connection.provider !== integration.provider) {
    throw ProblemError.invalid([
      {
        in: 'query',
        name: 'connectionId',
        value: connectionId,
        detail: `connectionId names a ${connection.provider} connection, but integration "${integration.name}" uses ${integration.provider}`,
      },
    ]);
  }
  return connectorFor(await connectionTarget(connection.id), { retry: interactiveRetry });
}

async function describe(connector: Connector, objectName: string): Promise<Described> {
  if (!connector.capabilities.objectMetadata) {
    return { error: new CapabilityNotSupportedError(connector.provider, 'objectMetadata').message };
  }
  try {
    return { metadata: await connector.listObjectMetadata(objectName) };
  } catch (error) {
    // Credentials the provider refuses (or that cannot be refreshed) fail every object alike.
    if (error instanceof ProviderError && error.status === 401) throw toProblem(error);
    if (error instanceof ConnectorError) return { error: error.message };
    if (error instanceof ProblemError) throw error;
    logger.error(
      { err: error, provider: connector.provider, objectName },
      'unexpected error describing an object',
    );
    return { error: 'Ferry hit an unexpected error while describing this object.' };
  }
}

async function describeAll(connector: Connector, objectNames: string[]): Promise<Map<string, Described>> {
  const results = new Map<string, Described>();
  const queue = [...objectNames];
  const worker = async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      results.set(name, await describe(connector, name));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
  return results;
}

/** Every provider field as an `allFields` entry, carrying the read object's mapping of it. */
function allFields(object: ReadObject, metadata: ObjectMetadata): Static<typeof HydratedFieldSchema>[] {
  const mappings = new Map<string, { mapToName?: string; mapToDisplayName?: string }>();
  for (const field of [...(object.requiredFields ?? []), ...(object.optionalFields ?? [])]) {
    if ('fieldName' in field) mappings.set(field.fieldName, field);
  }
  return Object.values(metadata.fields).map((field) => {
    const mapping = mappings.get(field.fieldName);
    return {
      fieldName: field.fieldName,
      displayName: field.displayName,
      ...(mapping?.mapToName && { mapToName: mapping.mapToName }),
      ...(mapping?.mapToDisplayName && { mapToDisplayName: mapping.mapToDisplayName }),
    };
  });
}

/**
 * The manifest's declared fields, each provider field with the provider's display name of it (its
 * field name where the provider could not say), as the public hydrated shape requires.
 */
function declaredFields(object: ReadObject, metadata: ObjectMetadata | undefined) {
  const withDisplayName = (fields: Field[] | undefined) =>
    fields?.map((field) =>
      'fieldName' in field
        ? { ...field, displayName: metadata?.fields[field.fieldName]?.displayName ?? field.fieldName }
        : field,
    );
  return {
    ...(object.requiredFields && { requiredFields: withDisplayName(object.requiredFields) }),
    ...(object.optionalFields && { optionalFields: withDisplayName(object.optionalFields) }),
  };
}

function hydrateReadObject(object: ReadObject, described: Described): HydratedReadObject {
  const { requiredFields: _required, optionalFields: _optional, ...rest } = object;
  const displayName =
    object.mapToDisplayName ??
    ('metadata' in described ? described.metadata.displayName : undefined) ??
    object.objectName;
  if ('error' in described) {
    return {
      ...rest,
      ...declaredFields(object, undefined),
      displayName,
      error: described.error,
      allFieldsMetadata: {},
      allFields: [],
    };
  }
  return {
    ...rest,
    ...declaredFields(object, described.metadata),
    displayName,
    allFieldsMetadata: described.metadata.fields,
    allFields: allFields(object, described.metadata),
  };
}

export async function hydrateRevision(
  revision: Revision,
  connector: Connector,
): Promise<HydratedRevisionView> {
  const content = revision.content;
  const readObjects = content.read?.objects ?? [];
  const writeObjects = content.write?.objects ?? [];
  const names = [...new Set([...readObjects, ...writeObjects].map((object) => object.objectName))];
  const described = await describeAll(connector, names);
  const displayNameOf = (objectName: string) => {
    const result = described.get(objectName);
    return (result && 'metadata' in result && result.metadata.displayName) || objectName;
  };
  const hydratedWrites: HydratedWriteObject[] = writeObjects.map((object) => ({
    ...object,
    displayName: displayNameOf(object.objectName),
  }));
  const { read: _read, write: _write, ...rest } = content;
  return {
    id: revision.id,
    specVersion: revision.specVersion,
    createTime: revision.createTime.toISOString(),
    content: {
      ...rest,
      ...(content.read && {
        read: {
          objects: readObjects.map((object) => hydrateReadObject(object, described.get(object.objectName)!)),
        },
      }),
      ...(content.write && { write: { objects: hydratedWrites } }),
    },
  };
}
