import type { ConnectorHooks } from '../declarative/connector.js';
import { ConnectorInputError, ProviderError } from '../errors.js';
import { describedFieldNames, forgetFieldNames, rememberedFieldNames } from './described-fields.js';

/**
 * Zoho CRM's quirks (the rest is `catalog/connectors/zoho.json`):
 * - listing records needs `fields`, at most 50 API names: a read without chosen fields asks for the
 *   first 50 the module's field metadata lists (remembered a few minutes), `Modified_Time` always
 *   among them; a module with more fields is read without the rest (choose fields to get others);
 * - `If-Modified-Since` answers 304 with no body when nothing changed since: an empty, finished read.
 */

const maxFields = 50;
const alwaysRead = ['Modified_Time'];

export const zohoHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    const unchanged = (error: unknown) => error instanceof ProviderError && error.status === 304;
    const read = async (run: () => Promise<Awaited<ReturnType<typeof declared>>>) => {
      try {
        return await run();
      } catch (error) {
        if (unchanged(error)) return { records: [], done: true };
        throw error;
      }
    };
    if (input.pageToken) return read(declared);
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
      return read(() => connector.readDeclaredPage({ ...input, fields }));
    }
    const remembered = rememberedFieldNames(connector, input.objectName);
    const readDescribed = async () => {
      const described = await describedFieldNames(connector, input.objectName);
      const fields = [...new Set([...alwaysRead, ...described])].slice(0, maxFields);
      return read(() => connector.readDeclaredPage({ ...input, fields }));
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
