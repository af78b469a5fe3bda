/**
 * A line diff of two texts, as `-`/`+` lines with up to `context` unchanged lines around each
 * change and `@@ line N @@` where a hunk starts. Longest common subsequence: manifests are short.
 */
export function lineDiff(before: string, after: string, context = 2): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..]
  const lengths = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lengths[i][j] =
        a[i] === b[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
  const ops: { kind: ' ' | '-' | '+'; text: string; line: number }[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push({ kind: ' ', text: a[i++], line: ++j });
    } else if (j < b.length && (i === a.length || lengths[i][j + 1] >= lengths[i + 1][j])) {
      ops.push({ kind: '+', text: b[j++], line: j });
    } else {
      ops.push({ kind: '-', text: a[i++], line: j + 1 });
    }
  }
  const near = ops.map((_, index) =>
    ops.slice(Math.max(0, index - context), index + context + 1).some((op) => op.kind !== ' '),
  );
  const out: string[] = [];
  ops.forEach((op, index) => {
    if (!near[index]) return;
    if (index === 0 || !near[index - 1]) out.push(`@@ line ${op.line} @@`);
    out.push(`${op.kind} ${op.text}`);
  });
  return out;
}
