import type { Config } from '../config.js';
import { checkSchedule, normalizedSchedule } from '../core/cron.js';
import type { ProblemIssue } from '../core/problem.js';
import { isKnownProvider } from '../providers/catalog/index.js';
import type { IntegrationContent } from '../schemas/integration-content.js';

/** The most often a schema watch may run. */
const WATCH_SCHEMA_MIN_INTERVAL_SECONDS = 3600;

function duplicates(names: string[]): Set<string> {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const name of names) (seen.has(name) ? repeated : seen).add(name);
  return repeated;
}

/**
 * Distinct schedules one request may name. Each is checked by walking its coming fires (tens of ms
 * for a busy one), and spelled differently every one is new: real manifests use a handful.
 */
export const MAX_DISTINCT_SCHEDULES = 50;

/** Too many distinct schedules across `contents`, as an issue named `name`; checked before any of them. */
export function distinctSchedulesIssue(
  contents: IntegrationContent[],
  name: string,
): ProblemIssue | undefined {
  const schedules = new Set<string>();
  for (const content of contents) {
    for (const object of content.read?.objects ?? []) schedules.add(normalizedSchedule(object.schedule));
    if (content.watchSchema?.schedule) schedules.add(normalizedSchedule(content.watchSchema.schedule));
  }
  if (schedules.size <= MAX_DISTINCT_SCHEDULES) return undefined;
  return {
    in: 'body',
    name,
    detail: `${name} names ${schedules.size} distinct schedules; at most ${MAX_DISTINCT_SCHEDULES} may be used at once`,
  };
}

/**
 * The rules of integration content that a schema cannot say: schedules are valid cron, object
 * names are unique per action, a backfill period names exactly one of `days` and `fullHistory`,
 * and the provider is one Ferry knows.
 */
/**
 * The deployment's limits on what integrations and installations may ask for (the shortest schedule,
 * FERRY_MIN_SCHEDULE_INTERVAL_SECONDS), handed in by the API and the CLI.
 */
export type ContentRules = Pick<Config, 'minScheduleIntervalSeconds'>;

export function integrationContentIssues(
  content: IntegrationContent,
  prefix: string,
  rules: ContentRules,
): ProblemIssue[] {
  const tooMany = distinctSchedulesIssue([content], prefix);
  if (tooMany) return [tooMany];
  const issues: ProblemIssue[] = [];
  const issue = (name: string, value: unknown, detail: string) =>
    issues.push({ in: 'body', name: `${prefix}.${name}`, value, detail: `${prefix}.${name} ${detail}` });

  if (!isKnownProvider(content.provider))
    issue('provider', content.provider, `names an unknown provider "${content.provider}"`);

  for (const action of ['read', 'write', 'subscribe'] as const) {
    const objects = content[action]?.objects ?? [];
    const repeated = duplicates(objects.map((object) => object.objectName));
    objects.forEach((object, index) => {
      if (repeated.has(object.objectName)) {
        issue(
          `${action}.objects[${index}].objectName`,
          object.objectName,
          `"${object.objectName}" is declared more than once`,
        );
      }
    });
  }

  content.read?.objects.forEach((object, index) => {
    const path = `read.objects[${index}]`;
    const schedule = checkSchedule(object.schedule, rules.minScheduleIntervalSeconds);
    if (!schedule.ok)
      issue(`${path}.schedule`, object.schedule, `is not an allowed schedule: ${schedule.reason}`);
    const period = object.backfill?.defaultPeriod;
    if (period && (period.days === undefined) === (period.fullHistory === undefined)) {
      issue(`${path}.backfill.defaultPeriod`, period, 'must have exactly one of days or fullHistory');
    }
    const fieldNames = [...(object.requiredFields ?? []), ...(object.optionalFields ?? [])].map((field) =>
      'fieldName' in field ? field.fieldName : `mapTo:${field.mapToName}`,
    );
    for (const name of duplicates(fieldNames))
      issue(`${path}.optionalFields`, name, `lists field "${name}" twice`);
  });
  if (content.watchSchema?.schedule) {
    // Field metadata changes slowly and describing every object costs provider calls: at most hourly.
    const schedule = checkSchedule(content.watchSchema.schedule, WATCH_SCHEMA_MIN_INTERVAL_SECONDS);
    if (!schedule.ok) {
      issue(
        'watchSchema.schedule',
        content.watchSchema.schedule,
        `is not an allowed schedule: ${schedule.reason}`,
      );
    }
  }
  return issues;
}
