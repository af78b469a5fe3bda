/** Whether two names are one typo apart (`fieldNme`, `fieldName`; `Contacts`, `contacts`). */
export function looksLike(a: string, b: string): boolean {
  if (a.toLowerCase() === b.toLowerCase()) return true;
  if (Math.abs(a.length - b.length) > 2) return false;
  // Levenshtein distance, one row at a time; two edits or fewer is a typo.
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + Number(a[i - 1] !== b[j - 1]));
      diagonal = above;
    }
  }
  return row[b.length] <= 2;
}

/** The known name a typed one most likely meant, if any is a typo away. */
export function meantName(typed: string, known: Iterable<string>): string | undefined {
  for (const name of known) if (looksLike(typed, name)) return name;
  return undefined;
}
