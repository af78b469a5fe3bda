import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { ConnectorInputError, ProviderError } from '../errors.js';
import { describedFieldNames, forgetFieldNames, rememberedFieldNames } from './described-fields.js';

/**
 * Salesforce's quirks (the rest is `catalog/connectors/salesforce.json`). Records are read with SOQL,
 * whose `SELECT` names every field it returns (there is no `*`; `FIELDS(ALL)` caps a query at 200
 * rows), so:
 * - a read without chosen fields selects every field the object's describe lists (remembered a few
 *   minutes; described again when the query refuses a remembered field);
 * - every read selects `Id` and `SystemModstamp`, without which a record has no id or time, and a
 *   read asking for deletions (walked through `queryAll`) selects `IsDeleted` too, where the
 *   object's describe lists it (objects without it keep no deleted records: `queryAll` is `query`);
 * - object and field names (filters' too) are written into the query text, so only SOQL names pass;
 * - a search is a SOQL `WHERE field = '…'` paged by `LIMIT`/`OFFSET`, since a query's batch size
 *   cannot go below 200 (OFFSET stops at 2,000);
 * - an object the org lacks is a 400 (`INVALID_TYPE`) to a query: said as a 404; the org's API
 *   request limit is a 403 (`REQUEST_LIMIT_EXCEEDED`): said as a 429, worth retrying later.
 */

const alwaysRead = ['Id', 'SystemModstamp'];
/** What marks a record `queryAll` lists from the Recycle Bin. */
const deletedField = 'IsDeleted';
/** An sObject's API name (`Account`, `Invoice__c`, `ns__Thing__c`). */
const objectName = /^[A-Za-z][A-Za-z0-9_]*$/;
/** A field's API name, or a relationship path to one (`Account.Name`). */
const fieldName = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*$/;

function checked(provider: string, kind: string, pattern: RegExp, name: string): string {
  if (!pattern.test(name)) {
    throw new ConnectorInputError(
      `"${name}" is not a Salesforce ${kind} name (letters, digits and _${kind === 'field' ? ', relationships joined by .' : ''}).`,
      provider,
    );
  }
  return name;
}

/**
 * Runs a query selecting the chosen fields, or every described one; a query refusing a remembered
 * field (INVALID_FIELD, a field removed since) is run again after a fresh describe.
 */
async function withSelection<T>(
  connector: HookContext,
  object: string,
  chosen: string[] | undefined,
  run: (fields: string[]) => Promise<T>,
  includeDeleted = false,
): Promise<T> {
  checked(connector.provider, 'object', objectName, object);
  if (chosen?.length) {
    const names = chosen.map((name) => checked(connector.provider, 'field', fieldName, name));
    const deletedMark =
      includeDeleted && (await describedFieldNames(connector, object)).includes(deletedField)
        ? [deletedField]
        : [];
    return run([...new Set([...alwaysRead, ...deletedMark, ...names])]);
  }
  const remembered = rememberedFieldNames(connector, object);
  const runDescribed = async () =>
    run([...new Set([...alwaysRead, ...(await describedFieldNames(connector, object))])]);
  try {
    return await runDescribed();
  } catch (error) {
    if (!remembered || !(error instanceof ProviderError) || error.status !== 400) throw error;
    forgetFieldNames(connector, object);
    return runDescribed();
  }
}

export const salesforceHooks: ConnectorHooks = {
  providerError(connector, objectName, error) {
    const message = error.providerMessage ?? '';
    if (error.status === 400 && /^sObject type '[^']*' is not supported/.test(message)) {
      return new ProviderError(connector.provider, `Salesforce has no object "${objectName}".`, {
        status: 404,
        retryable: false,
        providerMessage: message,
        request: error.request,
      });
    }
    if (error.status === 403 && /Limit exceeded/i.test(message)) {
      return new ProviderError(
        connector.provider,
        `Salesforce refused the request: the org's API request limit is used up (${message}).`,
        { status: 429, retryable: true, providerMessage: message, request: error.request },
      );
    }
    return error;
  },

  async readPage(connector, input, declared) {
    // A next page follows the query locator Salesforce gave, which already holds the query.
    if (input.pageToken) return declared();
    return withSelection(
      connector,
      input.objectName,
      input.fields,
      (fields) => connector.readDeclaredPage({ ...input, fields }),
      input.includeDeleted === true,
    );
  },

  async search(connector, input, declared) {
    // A next page's token holds the query: its filters and fields, checked on the first page.
    if (input.pageToken) return declared();
    for (const filter of input.filters) checked(connector.provider, 'field', fieldName, filter.fieldName);
    return withSelection(connector, input.objectName, input.fields, (fields) =>
      connector.searchDeclared({ ...input, fields }),
    );
  },
};
