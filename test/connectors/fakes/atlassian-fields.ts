/**
 * The fields of the Jira fake's site, as `GET /rest/api/3/field` describes them (system fields
 * and a few custom ones, one of each common type), and the allowed values create metadata lists.
 */

export interface FieldBean {
  id: string;
  key: string;
  name: string;
  custom: boolean;
  /** Can be placed on a screen, so a create or edit may set it. */
  orderable: boolean;
  navigable: boolean;
  searchable: boolean;
  clauseNames: string[];
  schema: { type: string; system?: string; items?: string; custom?: string; customId?: number };
}

const system = (id: string, name: string, type: string, orderable: boolean, items?: string): FieldBean => ({
  id,
  key: id,
  name,
  custom: false,
  orderable,
  navigable: true,
  searchable: true,
  clauseNames: [id],
  schema: { type, system: id, ...(items && { items }) },
});

const customType = 'com.atlassian.jira.plugin.system.customfieldtypes:';
const custom = (customId: number, name: string, type: string, kind: string): FieldBean => ({
  id: `customfield_${customId}`,
  key: `customfield_${customId}`,
  name,
  custom: true,
  orderable: true,
  navigable: true,
  searchable: true,
  clauseNames: [`cf[${customId}]`, name],
  schema: { type, custom: `${customType}${kind}`, customId },
});

export const FIELDS: FieldBean[] = [
  system('summary', 'Summary', 'string', true),
  system('description', 'Description', 'string', true),
  system('environment', 'Environment', 'string', true),
  system('issuetype', 'Issue Type', 'issuetype', true),
  system('project', 'Project', 'project', true),
  system('status', 'Status', 'status', false),
  system('priority', 'Priority', 'priority', true),
  system('labels', 'Labels', 'array', true, 'string'),
  system('assignee', 'Assignee', 'user', true),
  system('reporter', 'Reporter', 'user', true),
  system('creator', 'Creator', 'user', false),
  system('created', 'Created', 'datetime', false),
  system('updated', 'Updated', 'datetime', false),
  system('resolution', 'Resolution', 'resolution', true),
  system('resolutiondate', 'Resolved', 'datetime', false),
  system('duedate', 'Due date', 'date', true),
  system('components', 'Components', 'array', true, 'component'),
  system('fixVersions', 'Fix versions', 'array', true, 'version'),
  custom(10016, 'Story point estimate', 'number', 'float'),
  custom(10040, 'Team name', 'string', 'textfield'),
  custom(10041, 'Notes', 'string', 'textarea'),
  custom(10042, 'Severity', 'option', 'select'),
];

/** `GET /rest/api/3/field`: every field, as the site describes it. */
export function fieldCatalog(): FieldBean[] {
  return structuredClone(FIELDS);
}

export const PRIORITIES = ['Highest', 'High', 'Medium', 'Low', 'Lowest'].map((name, index) => ({
  self: `https://example.atlassian.net/rest/api/3/priority/${index + 1}`,
  id: String(index + 1),
  name,
}));

export const SEVERITIES = ['Critical', 'Major', 'Minor'].map((value, index) => ({
  self: `https://example.atlassian.net/rest/api/3/customFieldOption/${10100 + index}`,
  id: String(10100 + index),
  value,
}));
