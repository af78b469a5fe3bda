import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Ferry's custom search attributes: an operator finds any installation by these in the Temporal UI. */
export const FerryProjectId = defineSearchAttributeKey('FerryProjectId', SearchAttributeType.KEYWORD);
export const FerryIntegrationId = defineSearchAttributeKey('FerryIntegrationId', SearchAttributeType.KEYWORD);
export const FerryInstallationId = defineSearchAttributeKey(
  'FerryInstallationId',
  SearchAttributeType.KEYWORD,
);
export const FerryProvider = defineSearchAttributeKey('FerryProvider', SearchAttributeType.KEYWORD);
export const FerryGroupRef = defineSearchAttributeKey('FerryGroupRef', SearchAttributeType.KEYWORD);

export const searchAttributeNames = [
  'FerryProjectId',
  'FerryIntegrationId',
  'FerryInstallationId',
  'FerryProvider',
  'FerryGroupRef',
];
