import { notFound, validationError, type FieldProblem } from './errors.js';

export const objectNames = ['contacts', 'companies', 'deals'] as const;
export type ObjectName = (typeof objectNames)[number];

export function isObjectName(value: string): value is ObjectName {
  return (objectNames as readonly string[]).includes(value);
}

/** The object named in a URL; an unknown one is a 404, as for any path that does not exist. */
export function requireObjectName(value: string): ObjectName {
  if (!isObjectName(value)) {
    throw notFound(`Unknown object "${value}"; objects are contacts, companies and deals.`);
  }
  return value;
}

export type FieldType = 'string' | 'number' | 'boolean' | 'datetime' | 'enum';
const fieldTypes: readonly FieldType[] = ['string', 'number', 'boolean', 'datetime', 'enum'];

export interface FieldOption {
  value: string;
  label: string;
}

/** A field as the metadata endpoint describes it. */
export interface FieldDefinition {
  name: string;
  label: string;
  type: FieldType;
  /** The provider's own, finer type name (email, phone, currency...), as a real CRM would report it. */
  providerType: string;
  readOnly: boolean;
  custom: boolean;
  required: boolean;
  description?: string;
  options?: FieldOption[];
  maxLength?: number;
}

export const lifecycleStages = ['lead', 'qualified', 'opportunity', 'customer', 'churned'] as const;
export const dealStages = ['qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost'] as const;

function field(
  name: string,
  label: string,
  type: FieldType,
  providerType: string,
  extra: Partial<FieldDefinition> = {},
): FieldDefinition {
  const base: FieldDefinition = {
    name,
    label,
    type,
    providerType,
    readOnly: false,
    custom: false,
    required: false,
  };
  if (type === 'string' && !extra.readOnly) base.maxLength = 255;
  return { ...base, ...extra };
}

function optionsOf(values: readonly string[]): FieldOption[] {
  return values.map((value) => ({
    value,
    label: value.replace(/_/g, ' ').replace(/^\w/, (first) => first.toUpperCase()),
  }));
}

const systemFields = {
  id: () => field('id', 'ID', 'string', 'id', { readOnly: true }),
  createdAt: () => field('createdAt', 'Created at', 'datetime', 'datetime', { readOnly: true }),
  updatedAt: () => field('updatedAt', 'Updated at', 'datetime', 'datetime', { readOnly: true }),
};

const builtIns: Record<ObjectName, { displayName: string; fields: FieldDefinition[] }> = {
  contacts: {
    displayName: 'Contacts',
    fields: [
      systemFields.id(),
      field('firstName', 'First name', 'string', 'text'),
      field('lastName', 'Last name', 'string', 'text'),
      field('email', 'Email', 'string', 'email', { required: true }),
      field('phone', 'Phone', 'string', 'phone'),
      field('company', 'Company name', 'string', 'text'),
      field('jobTitle', 'Job title', 'string', 'text'),
      field('lifecycleStage', 'Lifecycle stage', 'enum', 'picklist', { options: optionsOf(lifecycleStages) }),
      systemFields.createdAt(),
      systemFields.updatedAt(),
    ],
  },
  companies: {
    displayName: 'Companies',
    fields: [
      systemFields.id(),
      field('name', 'Name', 'string', 'text', { required: true }),
      field('domain', 'Domain', 'string', 'domain'),
      field('industry', 'Industry', 'string', 'text'),
      field('employees', 'Employees', 'number', 'integer'),
      systemFields.createdAt(),
      systemFields.updatedAt(),
    ],
  },
  deals: {
    displayName: 'Deals',
    fields: [
      systemFields.id(),
      field('name', 'Name', 'string', 'text', { required: true }),
      field('amount', 'Amount', 'number', 'currency'),
      field('stage', 'Stage', 'enum', 'picklist', { options: optionsOf(dealStages) }),
      field('closeDate', 'Close date', 'datetime', 'date'),
      field('companyId', 'Company', 'string', 'reference'),
      systemFields.createdAt(),
      systemFields.updatedAt(),
    ],
  },
};

const customFieldName = /^[a-z][a-zA-Z0-9_]*$/;
const maxCustomFieldsPerObject = 100;
const customFieldKeys = new Set(['name', 'label', 'type', 'required', 'description', 'options', 'maxLength']);

export interface UpsertedField extends FieldDefinition {
  created: boolean;
}

/** The fields of each object: fixed built-ins plus custom fields defined at run time (kept in memory). */
export class ObjectSchemas {
  private custom = new Map<ObjectName, Map<string, FieldDefinition>>();

  displayName(object: ObjectName): string {
    return builtIns[object].displayName;
  }

  fields(object: ObjectName): FieldDefinition[] {
    return [...builtIns[object].fields, ...(this.custom.get(object)?.values() ?? [])];
  }

  field(object: ObjectName, name: string): FieldDefinition | undefined {
    return builtIns[object].fields.find((f) => f.name === name) ?? this.custom.get(object)?.get(name);
  }

  /** Validates every definition first, then applies them all: a bad request changes nothing. */
  upsertCustomFields(object: ObjectName, body: unknown): UpsertedField[] {
    const input = (body as { fields?: unknown } | undefined)?.fields;
    if (!body || typeof body !== 'object' || !Array.isArray(input) || input.length === 0) {
      throw validationError('The body must be {"fields": [...]} with at least one field.');
    }
    const problems: FieldProblem[] = [];
    const seen = new Set<string>();
    const definitions = input.map((raw, index) => {
      const definition = this.parseCustomField(object, raw, `fields[${index}]`, problems);
      if (definition && seen.has(definition.name)) {
        problems.push({ name: `fields[${index}].name`, message: `"${definition.name}" appears twice.` });
      }
      if (definition) seen.add(definition.name);
      return definition;
    });
    const existing = this.custom.get(object) ?? new Map<string, FieldDefinition>();
    const newCount = definitions.filter((d) => d && !existing.has(d.name)).length;
    if (existing.size + newCount > maxCustomFieldsPerObject) {
      problems.push({
        name: 'fields',
        message: `At most ${maxCustomFieldsPerObject} custom fields per object.`,
      });
    }
    if (problems.length) throw validationError('Some custom field definitions are invalid.', problems);
    this.custom.set(object, existing);
    return (definitions as FieldDefinition[]).map((definition) => {
      const created = !existing.has(definition.name);
      existing.set(definition.name, definition);
      return { ...definition, created };
    });
  }

  reset(): void {
    this.custom.clear();
  }

  private parseCustomField(
    object: ObjectName,
    raw: unknown,
    at: string,
    problems: FieldProblem[],
  ): FieldDefinition | undefined {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
      problems.push({ name: at, message: 'Each field must be an object.' });
      return undefined;
    }
    const start = problems.length;
    const input = raw as Record<string, unknown>;
    for (const key of Object.keys(input)) {
      if (!customFieldKeys.has(key)) problems.push({ name: `${at}.${key}`, message: 'Unknown property.' });
    }
    const { name, label, type, required, description, options, maxLength } = input;
    if (typeof name !== 'string' || !customFieldName.test(name)) {
      problems.push({ name: `${at}.name`, message: `The name must match ${customFieldName}.` });
    } else if (builtIns[object].fields.some((f) => f.name === name)) {
      problems.push({
        name: `${at}.name`,
        message: `"${name}" is a built-in field of ${object}; use a custom_ prefix.`,
      });
    }
    if (label !== undefined && (typeof label !== 'string' || !label.trim() || label.length > 255)) {
      problems.push({ name: `${at}.label`, message: 'The label must be a non-empty string.' });
    }
    if (typeof type !== 'string' || !fieldTypes.includes(type as FieldType)) {
      problems.push({ name: `${at}.type`, message: `The type must be one of ${fieldTypes.join(', ')}.` });
    }
    if (required !== undefined && typeof required !== 'boolean') {
      problems.push({ name: `${at}.required`, message: 'required must be a boolean.' });
    }
    if (description !== undefined && typeof description !== 'string') {
      problems.push({ name: `${at}.description`, message: 'description must be a string.' });
    }
    const validOptions =
      Array.isArray(options) &&
      options.length > 0 &&
      options.every((o) => typeof o === 'string' && o.length > 0) &&
      new Set(options).size === options.length;
    if (type === 'enum' && !validOptions) {
      problems.push({ name: `${at}.options`, message: 'An enum needs options: distinct non-empty strings.' });
    } else if (type !== 'enum' && options !== undefined) {
      problems.push({ name: `${at}.options`, message: 'Only enum fields take options.' });
    }
    const validMaxLength = typeof maxLength === 'number' && Number.isInteger(maxLength) && maxLength > 0;
    if (maxLength !== undefined && (type !== 'string' || !validMaxLength)) {
      problems.push({
        name: `${at}.maxLength`,
        message: 'maxLength is a positive integer, for string fields.',
      });
    }
    if (problems.length > start) return undefined;
    const definition: FieldDefinition = {
      name: name as string,
      label: (label as string | undefined) ?? (name as string),
      type: type as FieldType,
      providerType: type === 'enum' ? 'picklist' : (type as string),
      readOnly: false,
      custom: true,
      required: (required as boolean | undefined) ?? false,
    };
    if (description !== undefined) definition.description = description as string;
    if (type === 'enum') definition.options = (options as string[]).map((value) => ({ value, label: value }));
    if (type === 'string') definition.maxLength = (maxLength as number | undefined) ?? 255;
    return definition;
  }
}
