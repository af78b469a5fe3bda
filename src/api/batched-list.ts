import pLimit from 'p-limit';

/**
 * A list the contract returns whole (a project's integrations, installations, connections: 10,000
 * of them are 6 to 15 MB of JSON), read a batch at a time. Built whole from one query, fifty such
 * answers held 2.5 GB of rows and views, and each blocked the event loop for its whole build
 * (160 ms for 10,000 integrations), stalling every other request behind it.
 */
export class BatchedList<T> {
  constructor(readonly batches: AsyncIterable<T[]>) {}
}

/** The answer of a list read in batches (`ViewBatches` of `domain/read-views.ts`). */
export function batchedList<T>(batches: AsyncIterable<T[]>): BatchedList<T> {
  return new BatchedList(batches);
}

/**
 * Lists are built two at a time, in the order they were asked for: one's batch is read from
 * PostgreSQL while the other's is turned into JSON on the event loop. They are CPU-bound, so at
 * fifty at once, sharing the CPU would finish them all together at the end, while taking turns
 * finishes half of them in half the time. A list waiting its turn holds nothing.
 */
const buildTurns = pLimit(2);

/**
 * The list's JSON text, the same bytes as `JSON.stringify` of the whole array, as one chunk per
 * batch: only the text is kept (each batch's rows and views go once written), and the event loop
 * serves other requests between batches. Built before the answer begins, so any failure is a
 * problem-details answer, never a cut-short list. `check` sees each item (the tests' response
 * checks); once `abandoned` (the client went away while the list waited or was read), reading stops.
 */
export function jsonListText<T>(
  list: BatchedList<T>,
  options: { check?: (item: T) => void; abandoned?: () => boolean } = {},
): Promise<Buffer[]> {
  const { check, abandoned } = options;
  return buildTurns(async () => {
    // UTF-8 once, as it is built: the answer's length is then the chunks' sum.
    const chunks: Buffer[] = [];
    if (abandoned?.()) return chunks;
    for await (const batch of list.batches) {
      if (abandoned?.()) return [];
      if (!batch.length) continue;
      if (check) batch.forEach(check);
      const text = (chunks.length ? ',' : '[') + batch.map((item) => JSON.stringify(item)).join(',');
      chunks.push(Buffer.from(text));
    }
    chunks.push(Buffer.from(chunks.length ? ']' : '[]'));
    return chunks;
  });
}
