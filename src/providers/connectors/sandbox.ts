import type {
  CountInput,
  IncomingProviderEvent,
  ReadPageInput,
  ReadPageResult,
  SubscribeInput,
  Subscription,
  WriteInput,
  WriteResult,
} from '../connector.js';
import type { ConnectorCapabilities } from '../../schemas/capabilities.js';
import type { RecordChangeType } from '../../schemas/write.js';
import type {
  CustomFieldDefinition,
  CustomFieldUpsertResult,
  FieldMetadata,
  ObjectMetadata,
  UpsertCustomFieldsResult,
  ValueType,
} from '../../schemas/object-metadata.js';
import { WebhookVerificationError } from '../errors.js';
import { sandboxSignatureHeader, verifySandboxSignature } from '../../sandbox/signature.js';
import { BaseConnector } from './base.js';

/** A field as the sandbox's metadata endpoint describes it. */
interface SandboxField {
  name: string;
  label: string;
  type: 'string' | 'number' | 'boolean' | 'datetime' | 'enum';
  providerType: string;
  readOnly: boolean;
  custom: boolean;
  required: boolean;
  description?: string;
  options?: { value: string; label: string }[];
  maxLength?: number;
  created?: boolean;
}

interface SandboxCustomFieldInput {
  name: string;
  label: string;
  type: SandboxField['type'];
  required?: boolean;
  description?: string;
  options?: string[];
  maxLength?: number;
}

interface SandboxWebhookEvent {
  id: string;
  type: string;
  occurredAt: string;
  object: string;
  recordId: string;
  record?: Record<string, unknown>;
  changedFields?: string[];
}

const sandboxActions: Record<RecordChangeType, string> = {
  create: 'created',
  update: 'updated',
  delete: 'deleted',
};

const ferryChanges: Record<string, RecordChangeType> = {
  created: 'create',
  updated: 'update',
  deleted: 'delete',
};

/** The sandbox lists at most 1,000 records per page. */
const maxPageSize = 1000;

function valueTypeOf(field: SandboxField): ValueType {
  switch (field.type) {
    case 'string':
      return 'string';
    case 'number':
      return field.providerType === 'integer' ? 'int' : 'float';
    case 'boolean':
      return 'boolean';
    case 'datetime':
      return field.providerType === 'date' ? 'date' : 'datetime';
    case 'enum':
      return 'singleSelect';
    default:
      return 'other';
  }
}

function fieldMetadata(field: SandboxField): FieldMetadata {
  return {
    fieldName: field.name,
    displayName: field.label,
    valueType: valueTypeOf(field),
    providerType: field.providerType,
    readOnly: field.readOnly,
    isCustom: field.custom,
    isRequired: field.required,
    ...(field.options && {
      values: field.options.map((option) => ({ value: option.value, displayValue: option.label })),
    }),
  };
}

function headerValue(
  headers: Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/**
 * Ferry's bundled sandbox CRM (`sandbox` over OAuth 2, `sandboxApiKey` with an API key): every
 * capability, against the REST API under `{{.sandboxURL}}/api/v1`.
 */
export class SandboxConnector extends BaseConnector {
  readonly capabilities: Readonly<ConnectorCapabilities> = Object.freeze({
    read: true,
    write: true,
    delete: true,
    objectMetadata: true,
    customFields: true,
    subscribe: true,
    count: true,
    proxy: true,
  });

  override async readPage(input: ReadPageInput): Promise<ReadPageResult> {
    // The sandbox's cursor carries the window it continues, so it is the page token as it is.
    const { body } = await this.http.json<{ results: Record<string, unknown>[]; nextCursor: string | null }>({
      method: 'GET',
      path: `/${encodeURIComponent(input.objectName)}`,
      query: {
        limit: Math.max(1, Math.min(input.pageSize, maxPageSize)),
        updatedSince: input.since?.toISOString(),
        updatedUntil: input.until?.toISOString(),
        fields: input.fields?.length ? input.fields.join(',') : undefined,
        includeDeleted: input.includeDeleted ? 'true' : undefined,
        cursor: input.pageToken,
      },
    });
    return {
      records: body.results.map((raw) => ({
        id: String(raw.id),
        ...(typeof raw.updatedAt === 'string' && { updatedAt: raw.updatedAt }),
        raw,
        ...(raw.deleted === true && { deleted: true }),
      })),
      ...(body.nextCursor && { nextPageToken: body.nextCursor }),
      done: !body.nextCursor,
    };
  }

  override async write(input: WriteInput): Promise<WriteResult> {
    if (input.associations?.length) {
      throw this.unsupported(
        'associations',
        'The sandbox has no associations; set a deal’s companyId instead.',
      );
    }
    const object = encodeURIComponent(input.objectName);
    if (input.type === 'create') {
      const { body } = await this.http.json<Record<string, unknown>>({
        method: 'POST',
        path: `/${object}`,
        json: this.writeValues(input),
      });
      return { recordId: String(body.id), data: body };
    }
    const id = this.targetRecordId(input);
    if (input.type === 'update') {
      const { body } = await this.http.json<Record<string, unknown>>({
        method: 'PATCH',
        path: `/${object}/${encodeURIComponent(id)}`,
        json: this.writeValues(input),
        idempotent: true, // setting the same values twice leaves the same record
      });
      return { recordId: id, data: body };
    }
    await this.http.json({ method: 'DELETE', path: `/${object}/${encodeURIComponent(id)}` });
    return { recordId: id };
  }

  override async listObjectMetadata(objectName: string): Promise<ObjectMetadata> {
    const { body } = await this.http.json<{ object: string; displayName: string; fields: SandboxField[] }>({
      method: 'GET',
      path: `/metadata/${encodeURIComponent(objectName)}`,
    });
    return {
      name: body.object,
      displayName: body.displayName,
      fields: Object.fromEntries(body.fields.map((field) => [field.name, fieldMetadata(field)])),
    };
  }

  override async upsertCustomFields(
    objectName: string,
    fields: CustomFieldDefinition[],
  ): Promise<UpsertCustomFieldsResult> {
    const warnings = new Map<string, string[]>();
    const inputs = fields.map((definition) => {
      const { input, warnings: fieldWarnings } = this.customFieldInput(definition);
      if (fieldWarnings.length) warnings.set(definition.fieldName, fieldWarnings);
      return input;
    });
    const { body } = await this.http.json<{ fields: SandboxField[] }>({
      method: 'PUT',
      path: `/metadata/${encodeURIComponent(objectName)}/custom-fields`,
      json: { fields: inputs },
    });
    const results: Record<string, CustomFieldUpsertResult> = {};
    for (const field of body.fields) {
      results[field.name] = {
        fieldName: field.name,
        action: field.created ? 'create' : 'update',
        metadata: fieldMetadata(field),
        ...(warnings.has(field.name) && { warnings: warnings.get(field.name) }),
      };
    }
    return { fields: results };
  }

  override async subscribe(input: SubscribeInput): Promise<Subscription> {
    const { body } = await this.http.json<{ id: string; secret: string }>({
      method: 'POST',
      path: '/webhooks',
      json: { url: input.webhookUrl, events: this.eventNames(input) },
    });
    return { subscriptionId: body.id, secret: body.secret };
  }

  override async updateSubscription(subscriptionId: string, input: SubscribeInput): Promise<Subscription> {
    const { body } = await this.http.json<{ id: string; secret: string }>({
      method: 'PATCH',
      path: `/webhooks/${encodeURIComponent(subscriptionId)}`,
      json: { url: input.webhookUrl, events: this.eventNames(input), active: true },
      idempotent: true,
    });
    return { subscriptionId: body.id, secret: body.secret };
  }

  override async deleteSubscription(subscriptionId: string): Promise<void> {
    const response = await this.http.send({
      method: 'DELETE',
      path: `/webhooks/${encodeURIComponent(subscriptionId)}`,
    });
    if (response.status === 404) return; // already gone: the goal is reached
    if (response.status >= 300) {
      throw this.http.errorFor({ method: 'DELETE', path: `/webhooks/${subscriptionId}` }, response);
    }
  }

  override verifyWebhook(
    headers: Record<string, string | string[] | undefined>,
    rawBody: string | Buffer,
    secret: string,
  ): IncomingProviderEvent[] {
    const signature = headerValue(headers, sandboxSignatureHeader);
    if (!verifySandboxSignature(secret, signature, rawBody)) {
      throw new WebhookVerificationError(
        signature
          ? 'The sandbox webhook signature does not match the body, or is too old.'
          : `The sandbox webhook has no ${sandboxSignatureHeader} header.`,
        this.provider,
      );
    }
    let event: SandboxWebhookEvent;
    try {
      event = JSON.parse(
        Buffer.isBuffer(rawBody) ? rawBody.toString('utf8') : rawBody,
      ) as SandboxWebhookEvent;
    } catch {
      throw new WebhookVerificationError('The sandbox webhook body is not JSON.', this.provider);
    }
    const action = event.type?.split('.')[1] ?? '';
    return [
      {
        eventId: event.id,
        eventType: ferryChanges[action] ?? 'other',
        providerEventType: event.type,
        objectName: event.object,
        recordId: event.recordId,
        ...(event.record && { record: event.record }),
        ...(event.changedFields && { fieldsUpdated: event.changedFields }),
        occurredAt: event.occurredAt,
        rawEvent: event as unknown as Record<string, unknown>,
      },
    ];
  }

  override async estimateCount(input: CountInput): Promise<number | undefined> {
    const { body } = await this.http.json<{ count: number }>({
      method: 'GET',
      path: `/${encodeURIComponent(input.objectName)}/count`,
      query: { updatedSince: input.since?.toISOString(), updatedUntil: input.until?.toISOString() },
    });
    return body.count;
  }

  private eventNames(input: SubscribeInput): string[] {
    return input.events.map((event) => `${input.objectName}.${sandboxActions[event]}`);
  }

  /** A definition in the sandbox's terms; what the sandbox cannot honour is refused or named in warnings. */
  private customFieldInput(definition: CustomFieldDefinition): {
    input: SandboxCustomFieldInput;
    warnings: string[];
  } {
    const warnings: string[] = [];
    const { stringOptions, numericOptions } = definition;
    if (definition.unique) {
      throw this.unsupported('customFields', `The sandbox cannot make "${definition.fieldName}" unique.`);
    }
    const input: SandboxCustomFieldInput = {
      name: definition.fieldName,
      label: definition.displayName,
      type: 'string',
      ...(definition.required !== undefined && { required: definition.required }),
      ...(definition.description !== undefined && { description: definition.description }),
    };
    switch (definition.valueType) {
      case 'string':
        if (stringOptions?.values?.length && stringOptions.valuesRestricted) {
          input.type = 'enum';
          input.options = stringOptions.values;
        } else {
          if (stringOptions?.length !== undefined) input.maxLength = stringOptions.length;
          if (stringOptions?.values?.length) warnings.push('Suggested values are not kept by the sandbox.');
        }
        break;
      case 'singleSelect':
        input.type = 'enum';
        input.options = stringOptions?.values ?? [];
        break;
      case 'multiSelect':
        throw this.unsupported(
          'customFields',
          `The sandbox has no multi-select fields ("${definition.fieldName}").`,
        );
      case 'int':
      case 'float':
        input.type = 'number';
        if (numericOptions && Object.keys(numericOptions).length) {
          warnings.push('Numeric options (precision, scale, min, max, default) are not kept by the sandbox.');
        }
        break;
      case 'boolean':
        input.type = 'boolean';
        break;
      case 'date':
      case 'datetime':
        input.type = 'datetime';
        break;
    }
    if (stringOptions?.defaultValue !== undefined)
      warnings.push('Default values are not kept by the sandbox.');
    return { input, warnings };
  }
}
