import { parseArgs } from 'node:util';

/** Parses `--name value` options, failing with the command's usage on anything unknown. */
export function options<T extends Record<string, { type: 'string' | 'boolean'; short?: string }>>(
  args: string[],
  spec: T,
) {
  return parseArgs({ args, options: spec, allowPositionals: false, strict: true }).values;
}
