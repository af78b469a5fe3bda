import type { ConnectorHooks } from '../declarative/connector.js';
import { ConnectorInputError, ProviderError } from '../errors.js';
import { describedFieldNames, forgetFieldNames, rememberedFieldNames } from './described-fields.js';

/**
 * Zoho CRM's quirk (the rest is `catalog/connectors/zoho.json`, where `If-Modified-Since`'s 304 is
 * an empty page, `emptyStatuses`): listing records needs `fields`, at most 50 API names. A read
 * without chosen fields asks for the first 50 the module's field metadata lists (remembered a few
 * minutes), `Modified_Time` always among them; a module with more fields is read without the rest
 * (choose fields to get others).
 */

const maxFields = 50;
const alwaysRead = ['Modified_Time'];

export const zohoHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    // Later pages (and the listing of deletions after them) carry their fields in the page token.
    if (input.pageToken) return declared();
    if (input.fields?.length) {
      const fields = [...new Set([...alwaysRead, ...input.fields])];
      const bad = fields.find((name) => !/^[^,\s]+$/.test(name));
      if (bad)
        throw new ConnectorInputError(`"${bad}" is not a Zoho CRM field API name.`, connector.provider);
      if (fields.length > maxFields) {
        throw new ConnectorInputError(
          `Zoho CRM returns at most ${maxFields} fields a read; ${fields.length} were chosen (with Modified_Time).`,
          connector.provider,
        );
      }
      return connector.readDeclaredPage({ ...input, fields });
    }
    const remembered = rememberedFieldNames(connector, input.objectName);
    const readDescribed = async () => {
      const described = await describedFieldNames(connector, input.objectName);
      const fields = [...new Set([...alwaysRead, ...described])].slice(0, maxFields);
      return connector.readDeclaredPage({ ...input, fields });
    };
    try {
      return await readDescribed();
    } catch (error) {
      if (!remembered || !(error instanceof ProviderError) || error.status !== 400) throw error;
      // A field removed since it was described: describe the module again.
      forgetFieldNames(connector, input.objectName);
      return readDescribed();
    }
  },
};
