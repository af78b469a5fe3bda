import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { describedField } from '../declarative/field-metadata.js';
import type { CustomFieldDefinition, CustomFieldUpsertResult } from '../../schemas/object-metadata.js';

/**
 * The bundled sandbox CRM's code: custom fields (its own field definition format). Everything else,
 * signed webhooks included, is in `catalog/connectors/sandbox.json`.
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

/** A definition in the sandbox's terms; what the sandbox cannot honour is refused or named in warnings. */
function customFieldInput(
  connector: HookContext,
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
};
