import type { FieldMetadata, ObjectMetadata } from '../../schemas/object-metadata.js';
import type { DeclaredContext } from './context.js';
import { describedField, holds, isActiveField, staticField } from './field-metadata.js';
import { valueAt } from './json-pointer.js';
import { firstPageState, nextPageState, pageValues, type PageState } from './pagination.js';

/** An object's fields as a declaration describes them: its metadata endpoint and its static fields. */

export async function declaredMetadata(
  connector: DeclaredContext,
  objectName: string,
): Promise<ObjectMetadata> {
  if (!connector.capabilities.objectMetadata) throw connector.unsupported('objectMetadata');
  const object = connector.object(objectName);
  if (!object.metadata && !object.fields) {
    throw connector.unsupported(
      'objectMetadata',
      `Ferry cannot describe ${objectName} at "${connector.provider}".`,
    );
  }
  const fields: Record<string, FieldMetadata> = {};
  for (const [name, field] of Object.entries(object.fields ?? {})) fields[name] = staticField(name, field);
  const metadata = object.metadata;
  if (metadata) {
    const values = connector.templateValues(objectName, object);
    let state: PageState | undefined = metadata.pagination ? firstPageState(metadata.pagination) : {};
    while (state) {
      const request = state.url
        ? {
            method: 'GET' as const,
            path: connector.nextPageUrl(state.url, metadata.pagination),
            idempotent: true,
          }
        : connector.request(metadata.request, { ...values, ...pageValues(state) }, true);
      const response = await connector.send(objectName, request);
      const listed = valueAt(response.body, metadata.fields);
      const descriptors = Array.isArray(listed)
        ? listed
        : listed && typeof listed === 'object'
          ? Object.entries(listed).map(([key, value]) =>
              value && typeof value === 'object' ? { name: key, ...value } : value,
            )
          : [];
      for (const descriptor of descriptors) {
        if (metadata.where !== undefined && !holds(metadata.where, descriptor)) continue;
        // An inactive field is offered to no one: it takes no values and selects nothing.
        if (!isActiveField(metadata, descriptor)) continue;
        const field = describedField(metadata, descriptor);
        if (field) fields[field.fieldName] = field;
      }
      state = metadata.pagination
        ? nextPageState(metadata.pagination, state, {
            body: response.body,
            headers: response.headers,
            items: descriptors,
            ids: [],
            pageSize: Number.MAX_SAFE_INTEGER,
          })
        : undefined;
    }
  }
  return { name: objectName, displayName: object.displayName ?? objectName, fields };
}
