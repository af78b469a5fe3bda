import type { OperationLogView } from '../../schemas/operations.js';
import { CLIENT_OPTIONS_HELP, CommandError, FerryClient, clientArgs } from './http.js';

export const logsHelp = [
  'Prints an operation’s log, oldest first; --follow keeps printing new entries until it ends.',
  '',
  '  --follow          wait for new entries until the operation succeeds or fails',
  '  --interval <s>    seconds between looks when following (default 1)',
  '  --json            one JSON entry per line',
  CLIENT_OPTIONS_HELP,
  '',
  'Example:',
  '  FERRY_API_KEY=... ferry operations logs 0b0c…e1 --follow --api-url http://localhost:8080',
].join('\n');

function line(entry: OperationLogView): string {
  const details = Object.entries(entry.message.details ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
  return [entry.timestamp, entry.severity.padEnd(5), entry.message.msg, entry.message.error ?? '', details]
    .filter(Boolean)
    .join('  ');
}

export async function logsCommand(args: string[]): Promise<void> {
  const { values, positionals } = clientArgs(args, {
    follow: { type: 'boolean', short: 'f' },
    interval: { type: 'string' },
  });
  const [operationId, ...extra] = positionals;
  if (!operationId) throw new CommandError('which operation? ferry operations logs <operationId>');
  if (extra.length) throw new CommandError(`unexpected argument "${extra[0]}"`);
  const intervalMs = Number(values.interval ?? 1) * 1000;
  if (!(intervalMs >= 100)) throw new CommandError('--interval: seconds, at least 0.1');
  const client = new FerryClient(values);
  const path = client.projectPath(`/operations/${encodeURIComponent(operationId)}`);
  let printed = 0;
  for (;;) {
    // The status first: entries written before it ended are all in the listing that follows.
    const { status } = (await client.call<{ status: string }>('GET', path))!;
    const entries = (await client.call<OperationLogView[]>('GET', `${path}/logs`))!;
    for (const entry of entries.slice(printed))
      process.stdout.write(`${values.json ? JSON.stringify(entry) : line(entry)}\n`);
    printed = Math.max(printed, entries.length);
    if (!values.follow || status !== 'in_progress') {
      if (values.follow) process.stderr.write(`operation ${operationId}: ${status}\n`);
      if (values.follow && status === 'failure') process.exitCode = 1;
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
