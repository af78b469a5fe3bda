import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../../core/problem.js';
import { InstallationConfigEntity, type Installation } from '../../db/entities/installation.js';
import type { WriteConfig } from '../../schemas/installations.js';
import type { RecordChangeType, WriteRequest } from '../../schemas/write.js';
import type { WriteItem } from '../../temporal/contracts/write.js';
import { findInstallationForGroup } from '../reads/installation-context.js';

/**
 * A write request made ready to run: the records it carries, checked against the rules a schema
 * cannot state, for an object that must be a write object of the group's installation config. Its
 * `selectedValueDefaults` fill fields the record leaves out (on update only when `applyOnUpdate` is
 * `always`), and deletes need `deletionSettings.enabled`.
 */

export interface PreparedWrite {
  installation: Installation;
  objectName: string;
  type: RecordChangeType;
  mode: 'synchronous' | 'asynchronous';
  items: WriteItem[];
  /** A single `record` (answered as `result`) rather than a `batch` (answered as `results`). */
  single: boolean;
}

function bodyIssue(name: string, value: unknown, detail: string) {
  return { in: 'body' as const, name, value, detail: `${name} ${detail}` };
}

function idOf(record: Record<string, unknown> | undefined): string | undefined {
  const id = record?.id;
  return typeof id === 'string' && id !== '' ? id : typeof id === 'number' ? String(id) : undefined;
}

/**
 * Fills the fields the record leaves out with the config's defaults: `selectedValueDefaults`, and
 * `selectedFieldSettings` as the public React components send them (on create unless
 * `writeOnCreate: never`, on update only with `writeOnUpdate: always`).
 */
export function applyValueDefaults(
  record: Record<string, unknown>,
  config: Pick<WriteConfig, 'selectedValueDefaults' | 'selectedFieldSettings'>,
  type: RecordChangeType,
): Record<string, unknown> {
  const filled = { ...record };
  for (const [field, setting] of Object.entries(config.selectedValueDefaults ?? {})) {
    if (filled[field] !== undefined) continue;
    if (type === 'create' || (type === 'update' && setting.applyOnUpdate === 'always'))
      filled[field] = setting.value;
  }
  for (const [field, setting] of Object.entries(config.selectedFieldSettings ?? {})) {
    const value =
      setting.default?.stringValue ?? setting.default?.integerValue ?? setting.default?.booleanValue;
    if (filled[field] !== undefined || value === undefined) continue;
    if (
      (type === 'create' && setting.writeOnCreate !== 'never') ||
      (type === 'update' && setting.writeOnUpdate === 'always')
    )
      filled[field] = value;
  }
  return filled;
}

/** Checks the request against the rules a schema cannot state; returns the records to write. */
function requestItems(body: WriteRequest): WriteItem[] {
  const issues = [];
  if ((body.record === undefined) === (body.batch === undefined)) {
    issues.push(bodyIssue('record', body.record, 'or batch is required, and not both'));
  }
  if (body.batch && body.associations) {
    issues.push(bodyIssue('associations', body.associations, 'goes on each batch item, not beside batch'));
  }
  if (body.type === 'delete' && body.mode === 'asynchronous') {
    issues.push(bodyIssue('mode', body.mode, 'must be synchronous for deletes'));
  }
  const items: WriteItem[] = body.batch
    ? body.batch.map((item) => ({ record: item.record, associations: item.associations }))
    : body.record
      ? [{ record: body.record, associations: body.associations }]
      : [];
  if (body.type !== 'create') {
    items.forEach((item, index) => {
      if (!idOf(item.record)) {
        const name = body.batch ? `batch[${index}].record.id` : 'record.id';
        issues.push(bodyIssue(name, item.record?.id, `is required to ${body.type} a record`));
      }
    });
  }
  if (issues.length) throw ProblemError.invalid(issues);
  return items;
}

export async function prepareWrite(
  em: EntityManager,
  projectId: string,
  integrationIdOrName: string,
  objectName: string,
  body: WriteRequest,
): Promise<PreparedWrite> {
  const items = requestItems(body);
  const { installation } = await findInstallationForGroup(em, projectId, integrationIdOrName, body.groupRef);
  const installationConfig = await em.findOneOrFail(InstallationConfigEntity, { id: installation.configId });
  const content = installationConfig.content;
  const writeConfig = content.write?.objects?.[objectName];
  if (!writeConfig) {
    throw ProblemError.notFound(
      `Object "${objectName}" is not a write object of this installation’s config.`,
      'Add it under config.content.write.objects of the installation.',
    );
  }
  if (body.type === 'delete' && !writeConfig.deletionSettings?.enabled) {
    throw new ProblemError({
      status: 422,
      detail: `Deletes of "${objectName}" are not enabled in this installation’s config (deletionSettings.enabled).`,
    });
  }
  return {
    installation,
    objectName,
    type: body.type,
    mode: body.mode ?? 'synchronous',
    single: body.record !== undefined,
    items: items.map((item) => {
      const recordId = body.type === 'create' ? undefined : idOf(item.record);
      if (body.type === 'delete') return { recordId };
      return {
        ...item,
        record: applyValueDefaults(item.record ?? {}, writeConfig, body.type),
        ...(recordId && { recordId }),
      };
    }),
  };
}
