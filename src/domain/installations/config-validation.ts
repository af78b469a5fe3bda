import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError, type ProblemIssue } from '../../core/problem.js';
import { schemaIssues } from '../../core/validation.js';
import { DestinationEntity } from '../../db/entities/operation.js';
import type { IntegrationContent, ReadObject } from '../../schemas/integration-content.js';
import type { ContentRules } from '../integration-content.js';
import {
  InstallationConfigContentSchema,
  type InstallationConfigContent,
  type ReadConfig,
  type SubscribeConfig,
  type SubscribeConfigView,
} from '../../schemas/installations.js';
import { checkSchedule } from '../../core/cron.js';

export const CONFIG_CONTENT_PATH = 'config.content';

const actions = ['read', 'write', 'subscribe'] as const;
export type ConfigAction = (typeof actions)[number];

export interface ConfigValidationContext {
  projectId: string;
  provider: string;
  /** The content of the integration revision the config is for. */
  manifest: IntegrationContent;
  rules: ContentRules;
}

/** The provider fields a read object lets the customer select; undefined when any field may be selected. */
export function selectableFields(object: ReadObject): Set<string> | undefined {
  if (object.optionalFieldsAuto === 'all') return undefined;
  const fields = [...(object.requiredFields ?? []), ...(object.optionalFields ?? [])];
  const names = fields.flatMap((field) => ('fieldName' in field ? [field.fieldName] : []));
  // A manifest that names no provider fields does not know them; the provider's metadata decides later.
  return names.length ? new Set(names) : undefined;
}

function mappingNames(object: ReadObject): Set<string> {
  const fields = [...(object.requiredFields ?? []), ...(object.optionalFields ?? [])];
  return new Set(fields.flatMap((field) => (field.mapToName ? [field.mapToName] : [])));
}

export function manifestObjectNames(manifest: IntegrationContent, action: ConfigAction): string[] {
  return (manifest[action]?.objects ?? []).map((object) => object.objectName);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function offersOptionalFields(object: ReadObject): boolean {
  return object.optionalFieldsAuto === 'all' || (object.optionalFields ?? []).length > 0;
}

/**
 * A read object that leaves out `schedule` or `destination` gets the manifest's, and one whose
 * manifest object offers no optional fields may leave out `selectedFields` (the public React
 * components send neither: they come from the manifest). A copy; anything malformed is left for the
 * schema check to report.
 */
export function withManifestDefaults(content: unknown, manifest: IntegrationContent): unknown {
  if (!isRecord(content) || !isRecord(content.read) || !isRecord(content.read.objects)) return content;
  const declared = new Map((manifest.read?.objects ?? []).map((object) => [object.objectName, object]));
  const objects = Object.fromEntries(
    Object.entries(content.read.objects).map(([key, object]) => {
      const manifestObject = declared.get(key);
      if (!isRecord(object) || !manifestObject) return [key, object];
      return [
        key,
        {
          ...object,
          schedule: object.schedule ?? manifestObject.schedule,
          destination: object.destination ?? manifestObject.destination,
          // Nothing to choose from: an object without optional fields reads its required ones.
          ...(object.selectedFields === undefined &&
            !offersOptionalFields(manifestObject) && { selectedFields: {} }),
        },
      ];
    }),
  );
  return { ...content, read: { ...content.read, objects } };
}

/** Whether a subscribed object reuses its read object's fields and mappings, by either name of the flag. */
export function inheritsFieldsAndMappings(object: SubscribeConfig): boolean {
  return object.inheritFieldsAndMappings ?? object.inheritFieldsAndMapping ?? false;
}

/** A subscribed object with the flag under its public name only, always there (false unless given). */
export function subscribeConfigView(object: SubscribeConfig): SubscribeConfigView {
  const { inheritFieldsAndMapping: _manifestName, ...rest } = object;
  return { ...rest, inheritFieldsAndMappings: inheritsFieldsAndMappings(object) };
}

/**
 * Subscribed objects with the reuse flag under its public name (`inheritFieldsAndMappings`), given
 * by either name; both names with different values are left for `configRuleIssues` to refuse.
 */
function withPublicSubscribeFlag(content: unknown): unknown {
  if (!isRecord(content) || !isRecord(content.subscribe) || !isRecord(content.subscribe.objects))
    return content;
  const objects = Object.fromEntries(
    Object.entries(content.subscribe.objects).map(([key, object]) => {
      if (!isRecord(object)) return [key, object];
      const { inheritFieldsAndMappings: publicName, inheritFieldsAndMapping: manifestName } = object;
      if (publicName !== undefined && manifestName !== undefined && publicName !== manifestName)
        return [key, object];
      return [key, subscribeConfigView(object as SubscribeConfig)];
    }),
  );
  return { ...content, subscribe: { ...content.subscribe, objects } };
}

/**
 * Checks a config against its integration revision and the project: its shape, the provider, that
 * every object exists in the manifest for its action, that schedules are valid cron no more frequent
 * than FERRY_MIN_SCHEDULE_INTERVAL_SECONDS, that destinations exist and that selected fields are
 * ones the manifest offers. Throws one 400 naming every issue, so a bad config is rejected whole.
 */
export async function assertValidConfigContent(
  em: EntityManager,
  context: ConfigValidationContext,
  content: unknown,
  prefix = CONFIG_CONTENT_PATH,
): Promise<InstallationConfigContent> {
  content = withPublicSubscribeFlag(withManifestDefaults(content, context.manifest));
  const shapeIssues = schemaIssues(InstallationConfigContentSchema, content, 'body', prefix);
  if (shapeIssues.length) throw ProblemError.invalid(shapeIssues, 'The installation config is not valid.');
  const valid = content as InstallationConfigContent;
  const issues = configRuleIssues(context, valid, prefix);
  issues.push(...(await destinationIssues(em, context.projectId, valid, prefix)));
  if (issues.length) throw ProblemError.invalid(issues, 'The installation config is not valid.');
  return valid;
}

/** The rules that need no database: manifest membership, schedules, fields, provider, proxy. */
export function configRuleIssues(
  context: ConfigValidationContext,
  content: InstallationConfigContent,
  prefix = CONFIG_CONTENT_PATH,
): ProblemIssue[] {
  const issues: ProblemIssue[] = [];
  const issue = (name: string, value: unknown, detail: string) =>
    issues.push({ in: 'body', name: `${prefix}.${name}`, value, detail: `${prefix}.${name} ${detail}` });

  if (content.provider !== context.provider) {
    issue('provider', content.provider, `must be "${context.provider}", the integration's provider`);
  }
  for (const action of actions) {
    const declared = new Set(manifestObjectNames(context.manifest, action));
    for (const [key, object] of Object.entries(content[action]?.objects ?? {})) {
      const path = `${action}.objects.${key}`;
      if (object.objectName !== key) {
        issue(`${path}.objectName`, object.objectName, `must equal its key "${key}"`);
      }
      if (!declared.has(key)) {
        issue(
          path,
          key,
          `names an object the integration does not declare for ${action}` +
            (declared.size ? ` (declared: ${[...declared].join(', ')})` : ' (it declares none)'),
        );
      }
    }
  }
  const manifestReads = new Map(
    (context.manifest.read?.objects ?? []).map((object) => [object.objectName, object]),
  );
  for (const [key, object] of Object.entries(content.read?.objects ?? {})) {
    readObjectIssues(key, object, manifestReads.get(key), context.rules, issue);
  }
  for (const [key, object] of Object.entries(content.subscribe?.objects ?? {})) {
    if (object.inheritFieldsAndMapping !== undefined && object.inheritFieldsAndMappings !== undefined) {
      issue(
        `subscribe.objects.${key}.inheritFieldsAndMapping`,
        object.inheritFieldsAndMapping,
        'is another name for inheritFieldsAndMappings, which says otherwise: give one',
      );
    }
  }
  if (content.proxy?.enabled && !context.manifest.proxy?.enabled) {
    issue('proxy.enabled', true, 'cannot be true: the integration does not enable the proxy');
  }
  return issues;
}

function readObjectIssues(
  key: string,
  object: ReadConfig,
  declared: ReadObject | undefined,
  rules: ContentRules,
  issue: (name: string, value: unknown, detail: string) => void,
): void {
  const path = `read.objects.${key}`;
  const cron = checkSchedule(object.schedule, rules.minScheduleIntervalSeconds);
  if (!cron.ok) issue(`${path}.schedule`, object.schedule, `is not an allowed schedule: ${cron.reason}`);
  const period = object.backfill?.defaultPeriod;
  if (period && (period.days === undefined) === (period.fullHistory === undefined)) {
    issue(`${path}.backfill.defaultPeriod`, period, 'must have exactly one of days or fullHistory');
  }
  if (!declared) return;
  const allowed = selectableFields(declared);
  if (allowed) {
    for (const field of Object.keys(object.selectedFields)) {
      if (!allowed.has(field)) {
        issue(
          `${path}.selectedFields.${field}`,
          field,
          `is not a field the integration offers for "${key}" (offered: ${[...allowed].join(', ')})`,
        );
      }
    }
  }
  const mappings = mappingNames(declared);
  for (const mapToName of Object.keys(object.selectedFieldMappings ?? {})) {
    if (!mappings.has(mapToName)) {
      issue(
        `${path}.selectedFieldMappings.${mapToName}`,
        mapToName,
        `is not a field mapping the integration declares for "${key}"`,
      );
    }
  }
}

async function destinationIssues(
  em: EntityManager,
  projectId: string,
  content: InstallationConfigContent,
  prefix: string,
): Promise<ProblemIssue[]> {
  const uses = [
    ...Object.entries(content.read?.objects ?? {}).map(([key, object]) => ({
      name: `${prefix}.read.objects.${key}.destination`,
      destination: object.destination,
    })),
    ...Object.entries(content.subscribe?.objects ?? {}).map(([key, object]) => ({
      name: `${prefix}.subscribe.objects.${key}.destination`,
      destination: object.destination,
    })),
  ];
  if (!uses.length) return [];
  const found = await em.find(
    DestinationEntity,
    { projectId, name: { $in: [...new Set(uses.map((use) => use.destination))] } },
    { fields: ['name'] },
  );
  const known = new Set(found.map((destination) => destination.name));
  return uses
    .filter((use) => !known.has(use.destination))
    .map((use) => ({
      in: 'body' as const,
      name: use.name,
      value: use.destination,
      detail: `${use.name} names a destination "${use.destination}" that does not exist in this project`,
    }));
}
