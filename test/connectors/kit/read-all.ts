import type { Connector, ProviderRecord, ReadPageInput } from '../../../src/providers/connector.js';

/**
 * Every record of a read, page after page to its end. A page that is not the last must carry a
 * token for the next, and a read that never ends fails rather than hanging the test.
 */
export async function readAllPages(
  connector: Connector,
  input: Omit<ReadPageInput, 'pageToken'>,
  maxPages = 1000,
): Promise<ProviderRecord[]> {
  const records: ProviderRecord[] = [];
  let pageToken: string | undefined;
  for (let pages = 0; pages < maxPages; pages++) {
    const page = await connector.readPage({ ...input, ...(pageToken && { pageToken }) });
    records.push(...page.records);
    if (page.done) return records;
    pageToken = page.nextPageToken;
    if (!pageToken) throw new Error(`page ${pages + 1} is not the last but names no next page`);
  }
  throw new Error('the read never ended');
}
