import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError, type ProblemIssue } from '../core/problem.js';
import { fieldMapper, selectedProviderField } from '../delivery/record-mapping.js';
import { InstallationConfigEntity, type Installation } from '../db/entities/installation.js';
import { RevisionEntity } from '../db/entities/integration.js';
import { connectorFor } from '../providers/connectors/index.js';
import { CapabilityNotSupportedError, toProblem } from '../providers/errors.js';
import type { SearchAnswer, SearchRequest } from '../schemas/search.js';
import { connectionTarget } from './credentials.js';
import {
  findInstallationForGroup,
  findInstallationOfIntegration,
  readObjectSetup,
  type ReadObjectSetup,
} from './reads/installation-context.js';
import { providerFields, readSelection } from './reads/plan.js';

/**
 * Records of one installation's read object that match equality filters, fetched from the provider
 * now (the search host). Only fields the installation reads may be filtered on, and each record is
 * shaped exactly as reads deliver it: the same selection and mapping.
 */

/** The one operator Ferry offers, where the provider declares `support.search.operators.equals`. */
const EQUALS = 'eq';

export interface SearchTarget {
  groupRef?: string;
  installationId?: string;
}

async function installationOf(
  em: EntityManager,
  projectId: string,
  integrationIdOrName: string,
  target: SearchTarget,
): Promise<Installation> {
  if ((target.groupRef === undefined) === (target.installationId === undefined)) {
    throw ProblemError.invalid([
      {
        in: 'query',
        name: 'groupRef',
        value: target.groupRef,
        detail: 'groupRef or installationId is required, and not both',
      },
    ]);
  }
  if (target.installationId !== undefined) {
    return findInstallationOfIntegration(em, projectId, integrationIdOrName, target.installationId);
  }
  return (await findInstallationForGroup(em, projectId, integrationIdOrName, target.groupRef!)).installation;
}

/** The read object named by its provider name or, failing that, by its `mapToName`. */
export async function readObjectNamed(
  em: EntityManager,
  installation: Installation,
  name: string,
): Promise<{ objectName: string; setup: ReadObjectSetup }> {
  const direct = await readObjectSetup(em, installation, name);
  if (direct) return { objectName: name, setup: direct };
  const config = await em.findOneOrFail(InstallationConfigEntity, { id: installation.configId });
  const revision = await em.findOneOrFail(RevisionEntity, { id: config.revisionId });
  const mapped = revision.content.read?.objects.find((object) => object.mapToName === name);
  const setup = mapped && (await readObjectSetup(em, installation, mapped.objectName));
  if (!mapped || !setup) {
    throw ProblemError.notFound(
      `Object "${name}" is not a read object of this installation.`,
      'Search the objects the installation reads (config.content.read.objects).',
    );
  }
  return { objectName: mapped.objectName, setup };
}

export async function searchRecords(
  em: EntityManager,
  projectId: string,
  integrationIdOrName: string,
  target: SearchTarget,
  body: SearchRequest,
): Promise<SearchAnswer> {
  const operatorIssues: ProblemIssue[] = body.fieldFilters.flatMap((filter, index) =>
    filter.operator === EQUALS
      ? []
      : [
          {
            in: 'body' as const,
            name: `fieldFilters[${index}].operator`,
            value: filter.operator,
            detail: `fieldFilters[${index}].operator "${filter.operator}" is not supported; use "${EQUALS}"`,
          },
        ],
  );
  if (operatorIssues.length) throw ProblemError.invalid(operatorIssues);

  const installation = await installationOf(em, projectId, integrationIdOrName, target);
  const { objectName, setup } = await readObjectNamed(em, installation, body.objectName);
  const selection = readSelection(setup.declared, setup.configured);
  const filters = body.fieldFilters.map((filter) => ({
    filter,
    fieldName: selectedProviderField(selection, filter.fieldName),
  }));
  const unselected = filters.filter(({ fieldName }) => fieldName === undefined);
  if (unselected.length) {
    throw new ProblemError({
      status: 422,
      detail: `The installation does not read ${unselected
        .map(({ filter }) => `"${filter.fieldName}"`)
        .join(', ')} of ${objectName}; search only on fields it reads.`,
      retryable: false,
    });
  }

  try {
    const connector = connectorFor(await connectionTarget(installation.connectionId));
    if (!connector.capabilities.search) {
      throw new CapabilityNotSupportedError(connector.provider, 'search');
    }
    const page = await connector.search({
      objectName,
      filters: filters.map(({ filter, fieldName }) => ({ fieldName: fieldName!, value: filter.value })),
      fields: providerFields(selection),
      pageSize: body.pageSize ?? 100,
      ...(body.pageToken && { pageToken: body.pageToken }),
    });
    const map = fieldMapper(selection);
    return {
      result: page.records.map((record) => map(record.raw, record.values)),
      ...(page.nextPageToken && { nextPageToken: page.nextPageToken }),
    };
  } catch (error) {
    throw toProblem(error);
  }
}
