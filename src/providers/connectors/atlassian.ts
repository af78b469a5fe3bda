import type { ConnectorHooks } from '../declarative/connector.js';

/**
 * Jira's quirk (the rest is `catalog/connectors/atlassian.json`): the issue search
 * (`/rest/api/3/search/jql`) returns only each issue's `id` unless `fields` names more. A read
 * that chooses fields asks for those and `updated` (which places each issue in its window); one
 * that chooses none asks for every field (`*all`).
 */
export const atlassianHooks: ConnectorHooks = {
  readPage(connector, input, declared) {
    if (input.objectName !== 'issues') return declared();
    const fields = input.fields?.length ? [...new Set([...input.fields, 'updated'])] : ['*all'];
    return connector.readDeclaredPage({ ...input, fields });
  },
};
