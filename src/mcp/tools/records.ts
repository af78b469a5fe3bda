import Type from 'typebox';
import { ProblemError } from '../../core/problem.js';
import { fieldMapper, type MappedRecord } from '../../delivery/record-mapping.js';
import { connectionTarget } from '../../domain/credentials.js';
import { interactiveRetry } from '../../domain/object-metadata.js';
import { requestLog } from '../../domain/reads/connector.js';
import { providerFields, readSelection } from '../../domain/reads/plan.js';
import { readObjectNamed, searchRecords } from '../../domain/search.js';
import { connectorFor } from '../../providers/connectors/index.js';
import { CapabilityNotSupportedError, toProblem } from '../../providers/errors.js';
import { FieldFilterSchema } from '../../schemas/search.js';
import { defineTool, readOnly } from '../tool.js';

/**
 * Records of the installation's read objects, a page at a time and sized for a model: found by field
 * values (search) or changed since a time (read), fetched from the provider now and shaped by the
 * installation's field selection and mapping, never delivered anywhere.
 */

/** How far back a read looks when the agent names no `since`. */
const DEFAULT_READ_DAYS = 7;

const ObjectName = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'An object the installation reads (list_objects: `read: true`).',
});
const PageToken = Type.String({
  minLength: 1,
  maxLength: 10_000,
  description: '`nextPageToken` of the previous page, unchanged, for the next page.',
});
const pageSize = (maximum: number) =>
  Type.Integer({ minimum: 1, maximum, default: 20, description: `Records per page (1 to ${maximum}).` });

/** A record for the agent: its id, and the fields the installation reads under the names it gives them. */
function recordView(mapped: MappedRecord, id: unknown, updatedAt?: string) {
  return {
    ...((typeof id === 'string' || typeof id === 'number') && { id: String(id) }),
    ...(updatedAt && { updatedAt }),
    fields: { ...mapped.fields, ...mapped.mappedFields },
  };
}

export const searchRecordsTool = defineTool({
  name: 'search_records',
  title: 'Search records',
  description:
    'Finds records of an object the installation reads whose fields equal the values given (every filter must hold), where the provider supports search. Filter only on fields the installation reads. Answers one page; pass nextPageToken back for the next.',
  input: Type.Object(
    {
      objectName: ObjectName,
      filters: Type.Record(
        Type.String({ minLength: 1, maxLength: 200 }),
        FieldFilterSchema.properties.value,
        {
          minProperties: 1,
          maxProperties: 20,
          description: 'Field name → the value it must equal, e.g. {"email": "ada@example.com"}.',
        },
      ),
      pageSize: Type.Optional(pageSize(50)),
      pageToken: Type.Optional(PageToken),
    },
    { additionalProperties: false },
  ),
  annotations: readOnly,
  async run({ em, scope }, args) {
    const page = await searchRecords(
      em,
      scope.projectId,
      scope.integrationId,
      { groupRef: scope.groupRef },
      {
        objectName: args.objectName,
        fieldFilters: Object.entries(args.filters).map(([fieldName, value]) => ({
          fieldName,
          operator: 'eq',
          value,
        })),
        pageSize: args.pageSize ?? 20,
        ...(args.pageToken && { pageToken: args.pageToken }),
      },
    );
    return {
      records: page.result.map((record) => recordView(record as MappedRecord, record.raw.id)),
      ...(page.nextPageToken && { nextPageToken: page.nextPageToken }),
    };
  },
});

export const readRecordsTool = defineTool({
  name: 'read_records',
  title: 'Read recent records',
  description: `Reads records of an object the installation reads that changed since a time (default: the last ${DEFAULT_READ_DAYS} days), oldest first where the provider can sort, one page at a time; pass nextPageToken back for the next page. Nothing is delivered anywhere.`,
  input: Type.Object(
    {
      objectName: ObjectName,
      since: Type.Optional(
        Type.String({
          format: 'date-time',
          description: 'Only records changed at or after this instant (ISO 8601, e.g. 2026-01-31T00:00:00Z).',
        }),
      ),
      pageSize: Type.Optional(pageSize(100)),
      pageToken: Type.Optional(PageToken),
    },
    { additionalProperties: false },
  ),
  annotations: readOnly,
  async run({ em, installation, logs }, args) {
    const { objectName, setup } = await readObjectNamed(em, installation, args.objectName);
    const selection = readSelection(setup.declared, setup.configured);
    const since = args.since
      ? new Date(args.since)
      : new Date(Date.now() - DEFAULT_READ_DAYS * 24 * 60 * 60 * 1000);
    if (since.getTime() > Date.now()) {
      throw ProblemError.invalid([
        { in: 'body', name: 'since', value: args.since, detail: 'since must not be in the future' },
      ]);
    }
    try {
      const connector = connectorFor(await connectionTarget(installation.connectionId), {
        retry: interactiveRetry,
        onRequest: (entry) => logs.push(requestLog(entry)),
      });
      if (!connector.capabilities.read) throw new CapabilityNotSupportedError(connector.provider, 'read');
      const page = await connector.readPage({
        objectName,
        fields: providerFields(selection),
        since,
        pageSize: args.pageSize ?? 20,
        ...(args.pageToken && { pageToken: args.pageToken }),
      });
      const map = fieldMapper(selection);
      return {
        records: page.records.map((record) =>
          recordView(map(record.raw, record.values), record.id, record.updatedAt),
        ),
        ...(!page.done && page.nextPageToken && { nextPageToken: page.nextPageToken }),
      };
    } catch (error) {
      throw toProblem(error);
    }
  },
});
