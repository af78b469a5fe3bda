import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { valueAt } from '../declarative/json-pointer.js';
import type { FieldMetadata, ObjectMetadata } from '../../schemas/object-metadata.js';

/**
 * Dataverse's quirk (the rest is `catalog/connectors/dynamicsCRM.json`): a choice column's options
 * are not in the `Attributes` listing the declaration describes fields from. The Web API gives them
 * only when the collection is cast to the attribute's own metadata type, one request per type
 * (`…/Attributes/Microsoft.Dynamics.CRM.PicklistAttributeMetadata?$select=LogicalName&$expand=
 * OptionSet,GlobalOptionSet`; "you must perform separate queries to filter for each type",
 * https://learn.microsoft.com/power-apps/developer/data-platform/webapi/query-metadata-web-api).
 * Options are `{Value, Label: {UserLocalizedLabel: {Label}}, IsHidden}`; a hidden one is left out.
 */

/** The metadata type a choice field's options are read through, from its attribute type. */
function castOf(field: FieldMetadata): string | undefined {
  if (field.valueType === 'multiSelect') return 'MultiSelectPicklistAttributeMetadata';
  if (field.valueType !== 'singleSelect') return undefined;
  return (
    {
      Picklist: 'PicklistAttributeMetadata',
      State: 'StateAttributeMetadata',
      Status: 'StatusAttributeMetadata',
    } as Record<string, string>
  )[field.providerType];
}

function labelOf(label: unknown): string | undefined {
  const text = valueAt(label, '/UserLocalizedLabel/Label') ?? valueAt(label, '/LocalizedLabels/0/Label');
  return typeof text === 'string' && text ? text : undefined;
}

/** The options of each attribute of one metadata type, by logical name. */
async function optionsByAttribute(
  connector: HookContext,
  objectName: string,
  cast: string,
): Promise<Map<string, NonNullable<FieldMetadata['values']>>> {
  const object = connector.object(objectName);
  const response = await connector.send(
    objectName,
    connector.request(
      {
        method: 'GET',
        path: `/v9.2/EntityDefinitions(LogicalName='{{vars.entity}}')/Attributes/Microsoft.Dynamics.CRM.${cast}`,
        query: { $select: 'LogicalName', $expand: 'OptionSet,GlobalOptionSet' },
      },
      connector.templateValues(objectName, object),
      true,
    ),
  );
  const attributes = valueAt(response.body, '/value');
  const found = new Map<string, NonNullable<FieldMetadata['values']>>();
  for (const attribute of Array.isArray(attributes) ? attributes : []) {
    const name = valueAt(attribute, '/LogicalName');
    const options = [
      valueAt(attribute, '/OptionSet/Options'),
      valueAt(attribute, '/GlobalOptionSet/Options'),
    ].find(Array.isArray);
    if (typeof name !== 'string' || !options) continue;
    found.set(
      name,
      options
        .filter((option) => valueAt(option, '/IsHidden') !== true)
        .filter((option) => typeof valueAt(option, '/Value') === 'number')
        .map((option) => {
          const value = String(valueAt(option, '/Value'));
          return { value, displayValue: labelOf(valueAt(option, '/Label')) ?? value };
        }),
    );
  }
  return found;
}

async function withOptions(
  connector: HookContext,
  objectName: string,
  metadata: ObjectMetadata,
): Promise<ObjectMetadata> {
  const fields = Object.values(metadata.fields);
  const casts = [...new Set(fields.map(castOf).filter((cast): cast is string => cast !== undefined))];
  for (const cast of casts) {
    const options = await optionsByAttribute(connector, objectName, cast);
    for (const field of fields) {
      const values = castOf(field) === cast ? options.get(field.fieldName) : undefined;
      if (values?.length) field.values = values;
    }
  }
  return metadata;
}

export const dynamicsCRMHooks: ConnectorHooks = {
  async listObjectMetadata(connector, objectName, declared) {
    return withOptions(connector, objectName, await declared());
  },
};
