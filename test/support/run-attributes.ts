import { temporalClient } from '../../src/temporal/client.js';
import {
  FerryGroupRef,
  FerryInstallationId,
  FerryIntegrationId,
  FerryProjectId,
  FerryProvider,
} from '../../src/temporal/search-attributes.js';

/** The Ferry search attributes a run carries, by the names an operator filters on in the Temporal UI. */
export async function runAttributes(workflowId: string): Promise<Record<string, string | undefined>> {
  const client = await temporalClient();
  const attributes = (await client.workflow.getHandle(workflowId).describe()).typedSearchAttributes;
  return {
    projectId: attributes.get(FerryProjectId),
    integrationId: attributes.get(FerryIntegrationId),
    installationId: attributes.get(FerryInstallationId),
    provider: attributes.get(FerryProvider),
    groupRef: attributes.get(FerryGroupRef),
  };
}
