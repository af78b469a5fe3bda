import type { WriteInput, WriteResult } from '../connector.js';
import { ConnectorInputError, ProviderError } from '../errors.js';
import type { WriteOperation } from '../../schemas/connector-declaration.js';
import type { DeclaredContext } from './context.js';
import { foldValues } from './field-values.js';
import { valueAt } from './json-pointer.js';
import { placeholdersOf, type TemplateValues } from './template.js';

/** Writes as a declaration says: creates, updates and deletes of one record. */

/**
 * Whether the write sends `{{idempotencyKey}}` to a provider that honours it, so sending it again
 * under the same key applies it once (Stripe's `Idempotency-Key`).
 */
export function sendsIdempotencyKey(operation: WriteOperation | undefined): boolean {
  return (
    operation !== undefined && placeholdersOf(operation.request).some((p) => p.name === 'idempotencyKey')
  );
}

/** The id an update or delete targets: `recordId`, else `record.id` (updates only). */
export function targetRecordId(connector: DeclaredContext, input: WriteInput): string {
  const fromRecord = input.type === 'update' ? input.record?.id : undefined;
  const id =
    input.recordId ??
    (typeof fromRecord === 'string' || typeof fromRecord === 'number' ? String(fromRecord) : undefined);
  if (!id)
    throw new ConnectorInputError(
      `A ${input.type} of ${input.objectName} needs the record id.`,
      connector.provider,
    );
  return id;
}

/** The field values of a create or update, without the id (which the URL addresses). */
export function writeValues(connector: DeclaredContext, input: WriteInput): Record<string, unknown> {
  if (!input.record || typeof input.record !== 'object') {
    throw new ConnectorInputError(
      `A ${input.type} of ${input.objectName} needs a record.`,
      connector.provider,
    );
  }
  const { id: _id, ...values } = input.record;
  // Values named as the metadata names them go back into their containers (`custom_fields.<key>`).
  return foldValues(
    input.type === 'update' ? values : input.record,
    connector.object(input.objectName).values,
  );
}

export async function writeDeclared(connector: DeclaredContext, input: WriteInput): Promise<WriteResult> {
  const capability = input.type === 'delete' ? 'delete' : 'write';
  if (!connector.capabilities[capability]) throw connector.unsupported(capability);
  const object = connector.object(input.objectName);
  const operation = object.write?.[input.type];
  if (!operation) {
    throw connector.unsupported(
      input.type === 'delete' ? 'delete' : 'write',
      `Ferry cannot ${input.type} ${input.objectName} records at "${connector.provider}".`,
    );
  }
  if (
    input.associations?.length &&
    !placeholdersOf(operation.request).some((p) => p.name === 'associations')
  ) {
    throw connector.unsupported(
      'associations',
      `"${connector.provider}" takes no associations on a ${input.type} of ${input.objectName}; set the linking field instead.`,
    );
  }
  const id = input.type === 'create' ? undefined : targetRecordId(connector, input);
  const values: TemplateValues = {
    ...connector.templateValues(input.objectName, object),
    ...(id !== undefined && { id }),
    ...(input.idempotencyKey && { idempotencyKey: input.idempotencyKey }),
    ...(input.type !== 'delete' && { record: writeValues(connector, input) }),
    ...(input.associations?.length && { associations: input.associations }),
  };
  // Setting the same values twice leaves the same record; a create is repeated only under an
  // idempotency key the provider honours (the request sends {{idempotencyKey}}), never blindly.
  const keyed = input.idempotencyKey !== undefined && sendsIdempotencyKey(operation);
  const request = connector.request(
    operation.request,
    values,
    input.type === 'create' && !keyed ? undefined : true,
  );
  const response = await connector.send(input.objectName, request);
  const body = response.body;
  let recordId = id;
  if (input.type === 'create') {
    const fromBody = valueAt(body, operation.id ?? '/id');
    const fromHeader =
      operation.idHeader &&
      new RegExp(operation.idHeader.pattern).exec(
        response.headers[operation.idHeader.name.toLowerCase()] ?? '',
      )?.[1];
    const found = fromBody ?? fromHeader;
    if (found === undefined || found === null) {
      throw new ProviderError(
        connector.provider,
        `Provider "${connector.provider}" created the ${input.objectName} record but did not say its id.`,
        {
          retryable: false,
        },
      );
    }
    recordId = String(found);
  }
  const data = input.type === 'delete' ? undefined : valueAt(body, operation.record ?? '');
  const isRecord = data !== null && typeof data === 'object' && !Array.isArray(data);
  return { recordId: recordId!, ...(isRecord && { data: data as Record<string, unknown> }) };
}
