import type { IntegrationContent } from '../../schemas/integration-content.js';
import type { InstallationConfigContent } from '../../schemas/installations.js';
import type { InstallationConfigMessage, ReadObjectPlan } from '../../temporal/contracts/installation.js';

interface BackfillSetting {
  defaultPeriod: { days?: number; fullHistory?: boolean };
}

/** A backfill happens for a period of days > 0 or for the full history; `days: 0` means none. */
export function hasBackfillPeriod(backfill: BackfillSetting | undefined): boolean {
  const period = backfill?.defaultPeriod;
  return Boolean(period && (period.fullHistory === true || (period.days ?? 0) > 0));
}

/**
 * The objects an installation reads on a schedule: the selected ones that are not disabled, then
 * the manifest's `enabled: always` objects, which are read even when the customer selected nothing.
 * The installation's own schedule and backfill win over the manifest's.
 */
export function readPlan(content: InstallationConfigContent, manifest: IntegrationContent): ReadObjectPlan[] {
  const manifestObjects = new Map(
    (manifest.read?.objects ?? []).map((object) => [object.objectName, object]),
  );
  const selected = content.read?.objects ?? {};
  const plan: ReadObjectPlan[] = [];
  for (const [objectName, object] of Object.entries(selected)) {
    const declared = manifestObjects.get(objectName);
    if (object.disabled && declared?.enabled !== 'always') continue;
    plan.push({
      objectName,
      schedule: object.schedule,
      backfill: hasBackfillPeriod(object.backfill ?? declared?.backfill),
    });
  }
  for (const declared of manifestObjects.values()) {
    if (declared.enabled !== 'always' || Object.hasOwn(selected, declared.objectName)) continue;
    plan.push({
      objectName: declared.objectName,
      schedule: declared.schedule,
      backfill: hasBackfillPeriod(declared.backfill),
    });
  }
  return plan;
}

/** How often schemas are compared when the manifest does not say: daily, as the public service does. */
export const DEFAULT_SCHEMA_WATCH_SCHEDULE = '0 0 * * *';

/** A stored config version (already validated) as the workflow receives it. */
export function configMessage(
  config: { id: string; revisionId: string; content: InstallationConfigContent },
  manifest: IntegrationContent,
): InstallationConfigMessage {
  const content = config.content;
  return {
    configId: config.id,
    revisionId: config.revisionId,
    content,
    reads: readPlan(content, manifest),
    // Absent unless the manifest watches schemas, so messages to workflows that never did stay as they were.
    ...(manifest.watchSchema && {
      watchSchema: { schedule: manifest.watchSchema.schedule ?? DEFAULT_SCHEMA_WATCH_SCHEDULE },
    }),
  };
}
