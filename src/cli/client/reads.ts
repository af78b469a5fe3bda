import type { InstallationView } from '../../schemas/installations.js';
import { CLIENT_OPTIONS_HELP, CommandError, FerryClient, clientArgs } from './http.js';

export const readHelp = [
  'Starts a read of one object for a group now, through the read host; prints its operation.',
  'Without --since it reads the whole history (a backfill).',
  '',
  '  --group <ref>     the group whose installation reads (required)',
  '  --since <time>    read records changed since this ISO 8601 time',
  '  --read-url <url>  the read host (default $FERRY_READ_URL, else the one the api host names)',
  CLIENT_OPTIONS_HELP,
  '',
  'Example:',
  '  FERRY_API_KEY=... ferry read crm-read contacts --group acme --since 2026-11-01T00:00:00Z',
].join('\n');

export const pauseHelp = (kind: 'pause' | 'resume') =>
  [
    kind === 'pause'
      ? 'Pauses scheduled reads of a group’s installation (all objects, or those named); a read in progress finishes.'
      : 'Resumes paused reads of a group’s installation (all objects, or those named).',
    '',
    '  --group <ref>     the group (required)',
    '  --object <name>   only this object (repeat for more)',
    ...(kind === 'pause' ? ['  --note <text>     why, shown with the pause'] : []),
    '  --read-url <url>  the read host (default $FERRY_READ_URL, else the one the api host names)',
    CLIENT_OPTIONS_HELP,
    '',
    'Example:',
    `  FERRY_API_KEY=... ferry ${kind} crm-read --group acme --object contacts`,
  ].join('\n');

function requireGroup(group: string | undefined): string {
  if (!group) throw new CommandError('--group <ref> is required');
  return group;
}

export async function readCommand(args: string[]): Promise<void> {
  const { values, positionals } = clientArgs(args, { group: { type: 'string' }, since: { type: 'string' } });
  const [integration, objectName, ...extra] = positionals;
  if (!integration || !objectName) throw new CommandError('ferry read <integration> <object> --group <ref>');
  if (extra.length) throw new CommandError(`unexpected argument "${extra[0]}"`);
  const groupRef = requireGroup(values.group);
  const client = new FerryClient(values);
  const started = (await client.call<{ operationId: string }>(
    'POST',
    client.projectPath(
      `/integrations/${encodeURIComponent(integration)}/objects/${encodeURIComponent(objectName)}`,
    ),
    {
      host: 'read',
      body: { groupRef, mode: 'async', ...(values.since && { sinceTimestamp: values.since }) },
    },
  ))!;
  process.stdout.write(`${JSON.stringify(started)}\n`);
  if (!values.json)
    process.stderr.write(`follow it: ferry operations logs ${started.operationId} --follow\n`);
}

export async function pauseCommand(kind: 'pause' | 'resume', args: string[]): Promise<void> {
  const { values, positionals } = clientArgs(args, {
    group: { type: 'string' },
    object: { type: 'string', multiple: true },
    ...(kind === 'pause' && { note: { type: 'string' as const } }),
  });
  const [integration, ...extra] = positionals;
  if (!integration) throw new CommandError(`ferry ${kind} <integration> --group <ref>`);
  if (extra.length) throw new CommandError(`unexpected argument "${extra[0]}"`);
  const groupRef = requireGroup(values.group);
  const client = new FerryClient(values);
  const base = client.projectPath(`/integrations/${encodeURIComponent(integration)}/installations`);
  const [installation] = (await client.call<InstallationView[]>(
    'GET',
    `${base}?groupRef=${encodeURIComponent(groupRef)}`,
  ))!;
  if (!installation) throw new CommandError(`group "${groupRef}" has no installation of "${integration}"`);
  const objects = values.object as string[] | undefined;
  const note = (values as { note?: string }).note;
  await client.call('POST', `${base}/${installation.id}:${kind === 'pause' ? 'pause' : 'unpause'}`, {
    host: 'read',
    body: { ...(objects?.length && { objects }), ...(note !== undefined && { note }) },
  });
  const what = objects?.length ? objects.join(', ') : 'all objects';
  process.stdout.write(
    `${JSON.stringify({ installationId: installation.id, [kind === 'pause' ? 'paused' : 'resumed']: objects ?? 'all' })}\n`,
  );
  process.stderr.write(
    `${kind === 'pause' ? 'paused' : 'resumed'} ${what} of ${integration} for ${groupRef}\n`,
  );
}
