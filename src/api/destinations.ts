import Type from 'typebox';
import { defineRoute } from './route.js';
import { ProblemSchema, ProjectPathParams } from '../schemas/common.js';
import {
  CreateDestinationBody,
  DestinationParams,
  DestinationSchema,
  DestinationTestSchema,
  GetDestinationQuery,
  UpdateDestinationBody,
} from '../schemas/destinations.js';
import { DestinationEntity } from '../db/entities/operation.js';
import {
  createDestination,
  destinationPolicy,
  destinationView,
  findDestination,
  openSecrets,
  rotateDestinationSecret,
  updateDestination,
} from '../domain/destinations.js';
import { assertDestinationUnused } from '../domain/destination-users.js';
import { recoverDestination } from '../domain/destination-recovery.js';
import { sendTestMessage } from '../domain/destination-test.js';
import { logger } from '../logger.js';
import { destinationTypeNames, destinationTypes, type AnyDestinationType } from '../delivery/registry.js';

/** One type's fields, for the create operation's description (the OpenAPI document and /docs). */
function fieldList(schema: AnyDestinationType['metadata']): string {
  const required = new Set<string>(schema.required ?? []);
  const fields = Object.entries(
    schema.properties as Record<string, { description?: string; default?: unknown }>,
  );
  if (!fields.length) return 'none';
  return fields
    .map(
      ([name, field]) =>
        `\`${name}\`${required.has(name) ? ' (required)' : ''}${field.default !== undefined ? ` (default \`${JSON.stringify(field.default)}\`)` : ''}${field.description ? `: ${field.description}` : ''}`,
    )
    .join('; ');
}

/** Every registered type, its fields and what its message id becomes, declared once in its module. */
const typesDescription = destinationTypes()
  .map(
    (type) =>
      `- **${type.type}**: ${type.title}. metadata: ${fieldList(type.metadata)}. secrets: ${fieldList(type.secrets)}. Message id: ${type.messageIdOnFarSide}.`,
  )
  .join('\n');

const typeExamples = destinationTypes().map((type) => ({
  name: `my-${type.type}`,
  type: type.type,
  metadata: type.example.metadata,
  ...(type.example.secrets && { secrets: type.example.secrets }),
}));

export const destinationRoutes = [
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/destinations',
    operationId: 'createDestination',
    summary: 'Create a destination of any supported type',
    description: `Each type checks its own \`metadata\` and \`secrets\` and names the field it refuses; a secret of another type is refused. A server that cannot be reached at create time is not an error (it may come up later); a webhook's URL must resolve, and must reach a public address unless private destinations are allowed. A webhook's signing secret is generated unless given; read secrets with \`includeSecrets=true\`. Every message is the same JSON a webhook receives, under a stable message id.\n\n${typesDescription}\n\nNot supported here (400): snowflake, bigquery, redshift, pubsub, azureservicebus, clickhouse.`,
    tags: ['Destinations'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    body: CreateDestinationBody(destinationTypeNames(), typeExamples),
    responses: { 201: { description: 'Created', schema: DestinationSchema } },
  }).handle(async ({ em, project, body, settings }) => {
    const destination = await em.transactional(
      async (tx) => (await createDestination(tx, project.id, body, destinationPolicy(settings))).destination,
    );
    return { status: 201, body: destinationView(destination) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/destinations',
    operationId: 'listDestinations',
    summary: 'List destinations (without secrets)',
    tags: ['Destinations'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    responses: { 200: { description: 'Destinations', schema: Type.Array(DestinationSchema) } },
  }).handle(async ({ em, project }) => {
    const destinations = await em.find(
      DestinationEntity,
      { projectId: project.id },
      { orderBy: { createTime: 'asc', name: 'asc' } },
    );
    return { status: 200, body: destinations.map((destination) => destinationView(destination)) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}/destinations/{destinationNameOrId}',
    operationId: 'getDestination',
    summary: 'Get a destination; optionally its secrets, or rotate its signing secret',
    tags: ['Destinations'],
    auth: ['apiKey', 'bearer'],
    params: DestinationParams,
    query: GetDestinationQuery,
    responses: { 200: { description: 'The destination', schema: DestinationSchema } },
  }).handle(async ({ em, project, params, query, settings }) => {
    if (query.rotate) {
      const { destination, secrets } = await em.transactional(async (tx) => {
        const found = await findDestination(tx, project.id, params.destinationNameOrId);
        return {
          destination: found,
          secrets: rotateDestinationSecret(found, settings.delivery.secretRotationGraceMs),
        };
      });
      return { status: 200, body: destinationView(destination, secrets) };
    }
    const destination = await findDestination(em, project.id, params.destinationNameOrId);
    const secrets = query.includeSecrets ? openSecrets(destination) : undefined;
    return { status: 200, body: destinationView(destination, secrets) };
  }),
  defineRoute({
    method: 'PATCH',
    path: '/projects/{projectIdOrName}/destinations/{destinationNameOrId}',
    operationId: 'updateDestination',
    summary:
      'Update a destination’s name, any metadata or secrets field (`metadata.<field>`, `secrets.<field>`), or disabled flag',
    tags: ['Destinations'],
    auth: ['apiKey', 'bearer'],
    params: DestinationParams,
    body: UpdateDestinationBody,
    responses: { 200: { description: 'The updated destination', schema: DestinationSchema } },
  }).handle(async ({ em, project, params, body, settings }) => {
    let failingSince: Date | undefined;
    const destination = await em.transactional(async (tx) => {
      const found = await findDestination(tx, project.id, params.destinationNameOrId);
      if (found.disabledTime && body.updateMask.includes('disabled') && body.destination.disabled === false) {
        failingSince = found.firstFailureTime ?? found.disabledTime;
      }
      await updateDestination(tx, found, body.updateMask, body.destination, destinationPolicy(settings));
      return found;
    });
    // Re-enabled: what waited for it resumes (reads from their last page, notifications it missed).
    // Best effort: the change is committed; what could not be resumed can be retried by hand.
    if (failingSince) {
      await recoverDestination(em, project, destination, failingSince).catch((error: unknown) =>
        logger.warn({ err: error, destinationId: destination.id }, 'could not resume all that waited'),
      );
    }
    return { status: 200, body: destinationView(destination) };
  }),
  defineRoute({
    method: 'POST',
    path: '/projects/{projectIdOrName}/destinations/{destinationNameOrId}:test',
    operationId: 'testDestination',
    summary: 'Send a test message to a destination now',
    description:
      'Sends one message `{notificationType: "destination.test", data: {projectId, destinationId, destinationName, sentAt, message}}` with a fresh message id, signed and addressed as every message to this destination is, and answers what the destination said. Nothing is retried or recorded, the destination\'s health does not change, and a disabled destination can be tested. A destination that refuses the message is still a 200: `delivered` is false and `error` says why.',
    tags: ['Destinations'],
    auth: ['apiKey', 'bearer'],
    params: DestinationParams,
    responses: { 200: { description: 'What the destination answered', schema: DestinationTestSchema } },
  }).handle(async ({ em, project, params, settings }) => {
    return { status: 200, body: await sendTestMessage(em, project.id, params.destinationNameOrId, settings) };
  }),
  defineRoute({
    method: 'DELETE',
    path: '/projects/{projectIdOrName}/destinations/{destinationNameOrId}',
    operationId: 'deleteDestination',
    summary: 'Delete a destination and its delivery history',
    tags: ['Destinations'],
    auth: ['apiKey', 'bearer'],
    params: DestinationParams,
    responses: {
      204: { description: 'Deleted' },
      409: { description: 'Integrations or installations still name it', schema: ProblemSchema },
    },
  }).handle(async ({ em, project, params }) => {
    await em.transactional(async (tx) => {
      const destination = await findDestination(tx, project.id, params.destinationNameOrId);
      await assertDestinationUnused(tx, destination, 'delete');
      tx.remove(destination);
    });
    return { status: 204 };
  }),
];
