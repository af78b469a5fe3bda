import type { ConnectionView } from '../../schemas/connections.js';
import type { DestinationView } from '../../schemas/destinations.js';
import type { InstallationView } from '../../schemas/installations.js';
import type { IntegrationView } from '../../schemas/integrations.js';
import { CLIENT_OPTIONS_HELP, FerryClient, clientArgs, table, CommandError } from './http.js';

type Resource = 'integrations' | 'installations' | 'connections' | 'destinations';

const day = (iso?: string) => (iso ? iso.replace('T', ' ').slice(0, 19) : '');

export const listHelp = (resource: Resource) =>
  [
    `Lists the project's ${resource} as a table (--json: the API's answer as it is).`,
    '',
    ...(resource === 'installations' || resource === 'connections'
      ? ['  --group <ref>     only this group’s']
      : []),
    '  --json            print JSON instead of a table',
    CLIENT_OPTIONS_HELP,
    '',
    'Example:',
    `  FERRY_API_KEY=... ferry ${resource} list --api-url http://localhost:8080 --project development`,
  ].join('\n');

export async function listCommand(resource: Resource, args: string[]): Promise<void> {
  const { values, positionals } = clientArgs(args, { group: { type: 'string' } });
  if (positionals.length) throw new CommandError(`unexpected argument "${positionals[0]}"`);
  if (values.group && resource !== 'installations' && resource !== 'connections')
    throw new CommandError(`--group applies to installations and connections, not ${resource}`);
  const client = new FerryClient(values);
  const query = values.group ? `?groupRef=${encodeURIComponent(values.group)}` : '';
  const listed = (await client.call<unknown[]>('GET', client.projectPath(`/${resource}${query}`)))!;
  if (values.json) {
    process.stdout.write(`${JSON.stringify(listed, null, 2)}\n`);
    return;
  }
  process.stdout.write(await render(client, resource, listed));
}

async function render(client: FerryClient, resource: Resource, listed: unknown[]): Promise<string> {
  switch (resource) {
    case 'integrations':
      return table(
        ['NAME', 'PROVIDER', 'REVISION', 'UPDATED'],
        (listed as IntegrationView[]).map((item) => [
          item.name,
          item.provider,
          item.latestRevision.id,
          day(item.updateTime),
        ]),
      );
    case 'installations': {
      const integrations = (await client.call<IntegrationView[]>(
        'GET',
        client.projectPath('/integrations'),
      ))!;
      const names = new Map(integrations.map((integration) => [integration.id, integration.name]));
      return table(
        ['ID', 'INTEGRATION', 'GROUP', 'HEALTH', 'LAST OPERATION', 'WHY'],
        (listed as InstallationView[]).map((item) => [
          item.id,
          names.get(item.integrationId) ?? item.integrationId,
          item.group?.groupRef ?? item.connection.group.groupRef,
          item.healthStatus,
          item.lastOperationStatus ?? '',
          item.healthReason ?? '',
        ]),
      );
    }
    case 'connections':
      return table(
        ['ID', 'PROVIDER', 'GROUP', 'CONSUMER', 'STATUS', 'CREATED'],
        (listed as ConnectionView[]).map((item) => [
          item.id,
          item.provider,
          item.group.groupRef,
          item.consumer.consumerRef,
          item.status,
          day(item.createTime),
        ]),
      );
    case 'destinations':
      return table(
        ['NAME', 'TYPE', 'STATE', 'WHERE'],
        (listed as DestinationView[]).map((item) => [
          item.name,
          item.type,
          item.disabled ? `disabled since ${day(item.disableTime)}` : 'enabled',
          destinationTarget(item.metadata as Record<string, unknown>),
        ]),
      );
  }
}

/** Where a destination sends, from the settings each type names it by (its URL, queue, bucket, table). */
function destinationTarget(metadata: Record<string, unknown>): string {
  const named = [
    'url',
    'serverUrl',
    'queueUrl',
    'bucket',
    'streamName',
    'stream',
    'table',
    'subject',
    'topic',
  ];
  const found = named.map((key) => metadata[key]).find((value) => typeof value === 'string');
  return typeof found === 'string' ? found : '';
}
