import type { ProblemIssue } from '../core/problem.js';
import { meantName } from '../core/similar-names.js';
import { connectorDeclaration } from '../providers/catalog/index.js';
import { effectiveObject } from '../providers/catalog/connector-declarations.js';
import type { Manifest } from '../schemas/integration-content.js';

/**
 * What a manifest names that the provider's deep connector does not know: an object it cannot read,
 * write or subscribe to, or a field of an object whose fields it lists in full. These are warnings,
 * not errors: a deployment may run a newer connector, and proxy-only integrations name no objects.
 * Providers without a deep connector are not checked (nothing is known about their objects).
 */
export function manifestWarnings(manifest: Manifest): ProblemIssue[] {
  const warnings: ProblemIssue[] = [];
  manifest.integrations.forEach((content, index) => {
    const declaration = connectorDeclaration(content.provider);
    if (!declaration) return;
    const known = Object.keys(declaration.objects).filter((name) => name !== '*');
    const sections = [
      ['read', content.read?.objects],
      ['write', content.write?.objects],
      ['subscribe', content.subscribe?.objects],
    ] as const;
    for (const [action, objects] of sections) {
      (objects ?? []).forEach((object, objectIndex) => {
        const at = `integrations[${index}].${action}.objects[${objectIndex}]`;
        const declared = effectiveObject(declaration, object.objectName);
        if (!declared) {
          const meant = meantName(object.objectName, known);
          warnings.push({
            in: 'body',
            name: `${at}.objectName`,
            value: object.objectName,
            detail: `${at}.objectName "${object.objectName}" is not an object the ${content.provider} connector knows${
              meant ? `; did you mean ${meant}?` : ` (it knows ${known.join(', ')})`
            }`,
          });
          return;
        }
        // Only a complete list can say a field is unknown: no metadata endpoint, no custom fields.
        const fields = declared.fields;
        if (!fields || declared.metadata || declaration.hooks?.capabilities?.includes('customFields')) return;
        for (const list of ['requiredFields', 'optionalFields'] as const) {
          const chosen = (object as { [key in typeof list]?: { fieldName?: string }[] })[list] ?? [];
          chosen.forEach((field, fieldIndex) => {
            if (!field.fieldName || Object.hasOwn(fields, field.fieldName)) return;
            const name = `${at}.${list}[${fieldIndex}].fieldName`;
            const meant = meantName(field.fieldName, Object.keys(fields));
            warnings.push({
              in: 'body',
              name,
              value: field.fieldName,
              detail: `${name} "${field.fieldName}" is not a field of ${object.objectName} the ${content.provider} connector knows${
                meant ? `; did you mean ${meant}?` : ''
              }`,
            });
          });
        }
      });
    }
  });
  return warnings;
}
