import type { IncomingProviderEvent, SubscribeInput } from '../connector.js';
import type { ConnectorHooks, DeclaredConnector } from '../declarative/connector.js';
import { describedField } from '../declarative/field-metadata.js';
import { WebhookVerificationError } from '../errors.js';
import type { CustomFieldDefinition, CustomFieldUpsertResult } from '../../schemas/object-metadata.js';
import type { RecordChangeType } from '../../schemas/write.js';
import { sandboxSignatureHeader, verifySandboxSignature } from '../../sandbox/signature.js';

/**
 * The bundled sandbox CRM's code: custom fields (its own field definition format) and webhook
 * subscriptions with signed deliveries. Everything else is in `catalog/connectors/sandbox.json`.
 */

interface SandboxCustomFieldInput {
  name: string;
  label: string;
  type: 'string' | 'number' | 'boolean' | 'datetime' | 'enum';
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

function eventNames(input: SubscribeInput): string[] {
  return input.events.map((event) => `${input.objectName}.${sandboxActions[event]}`);
}

/** A definition in the sandbox's terms; what the sandbox cannot honour is refused or named in warnings. */
function customFieldInput(
  connector: DeclaredConnector,
  definition: CustomFieldDefinition,
): { input: SandboxCustomFieldInput; warnings: string[] } {
  const warnings: string[] = [];
  const { stringOptions, numericOptions } = definition;
  if (definition.unique) {
    throw connector.unsupported('customFields', `The sandbox cannot make "${definition.fieldName}" unique.`);
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
      throw connector.unsupported(
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
  if (stringOptions?.defaultValue !== undefined) warnings.push('Default values are not kept by the sandbox.');
  return { input, warnings };
}

export const sandboxHooks: ConnectorHooks = {
  async upsertCustomFields(connector, objectName, fields) {
    const metadata = connector.object(objectName).metadata!;
    const warnings = new Map<string, string[]>();
    const inputs = fields.map((definition) => {
      const { input, warnings: fieldWarnings } = customFieldInput(connector, definition);
      if (fieldWarnings.length) warnings.set(definition.fieldName, fieldWarnings);
      return input;
    });
    const { body } = await connector.send(objectName, {
      method: 'PUT',
      path: `/metadata/${encodeURIComponent(objectName)}/custom-fields`,
      json: { fields: inputs },
    });
    const results: Record<string, CustomFieldUpsertResult> = {};
    for (const field of (body as { fields: { name: string; created?: boolean }[] }).fields) {
      results[field.name] = {
        fieldName: field.name,
        action: field.created ? 'create' : 'update',
        metadata: describedField(metadata, field),
        ...(warnings.has(field.name) && { warnings: warnings.get(field.name) }),
      };
    }
    return { fields: results };
  },

  async subscribe(connector, input) {
    const { body } = await connector.send(input.objectName, {
      method: 'POST',
      path: '/webhooks',
      json: { url: input.webhookUrl, events: eventNames(input) },
    });
    const made = body as { id: string; secret: string };
    return { subscriptionId: made.id, secret: made.secret };
  },

  async updateSubscription(connector, subscriptionId, input) {
    const { body } = await connector.send(input.objectName, {
      method: 'PATCH',
      path: `/webhooks/${encodeURIComponent(subscriptionId)}`,
      json: { url: input.webhookUrl, events: eventNames(input), active: true },
      idempotent: true,
    });
    const made = body as { id: string; secret: string };
    return { subscriptionId: made.id, secret: made.secret };
  },

  async deleteSubscription(connector, subscriptionId) {
    const request = { method: 'DELETE' as const, path: `/webhooks/${encodeURIComponent(subscriptionId)}` };
    const response = await connector.http.send(request);
    if (response.status === 404) return; // already gone: the goal is reached
    if (response.status >= 300) throw connector.http.errorFor(request, response);
  },

  verifyWebhook(connector, headers, rawBody, secret): IncomingProviderEvent[] {
    const signature = headerValue(headers, sandboxSignatureHeader);
    if (!verifySandboxSignature(secret, signature, rawBody)) {
      throw new WebhookVerificationError(
        signature
          ? 'The sandbox webhook signature does not match the body, or is too old.'
          : `The sandbox webhook has no ${sandboxSignatureHeader} header.`,
        connector.provider,
      );
    }
    let event: SandboxWebhookEvent;
    try {
      event = JSON.parse(
        Buffer.isBuffer(rawBody) ? rawBody.toString('utf8') : rawBody,
      ) as SandboxWebhookEvent;
    } catch {
      throw new WebhookVerificationError('The sandbox webhook body is not JSON.', connector.provider);
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
  },
};
