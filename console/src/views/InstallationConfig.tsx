import type { InstallationContent, ReadObjectConfig } from '../api';
import { time } from '../ui';

const listed = (names: string[]) => (names.length ? names.join(', ') : 'none');

function readFields(config: ReadObjectConfig): string {
  if (config.selectedFieldsAuto === 'all') return 'all';
  const selected = Object.entries(config.selectedFields ?? {}).flatMap(([name, on]) => (on ? [name] : []));
  return selected.length ? selected.join(', ') : 'the required ones';
}

function backfill(config: ReadObjectConfig): string | undefined {
  const period = config.backfill?.defaultPeriod;
  if (!period) return undefined;
  if (period.fullHistory) return 'backfill: whole history';
  return period.days ? `backfill: ${period.days} days` : 'no backfill';
}

/**
 * The installation's config as the builder (or their customer) set it: each object with its
 * schedule, destination, fields, mappings and defaults, and who made this version when.
 */
export function InstallationConfigDetails(props: {
  label: string;
  content: InstallationContent;
  version?: { id: string; createdBy?: string; createTime?: string };
}) {
  const { content, version } = props;
  const rows: [string, string, string][] = [
    ...Object.entries(content.read?.objects ?? {}).map(([name, config]): [string, string, string] => [
      'read',
      name,
      [
        `${config.schedule} → ${config.destination ?? 'the manifest’s destination'}`,
        config.disabled ? 'disabled' : '',
        `fields: ${readFields(config)}`,
        Object.keys(config.selectedFieldMappings ?? {}).length
          ? `mappings: ${Object.entries(config.selectedFieldMappings!)
              .map(([to, from]) => `${to} ← ${from}`)
              .join(', ')}`
          : '',
        backfill(config) ?? '',
      ]
        .filter(Boolean)
        .join('; '),
    ]),
    ...Object.entries(content.write?.objects ?? {}).map(([name, config]): [string, string, string] => [
      'write',
      name,
      [
        `defaults: ${listed(
          Object.entries(config.selectedValueDefaults ?? {}).map(
            ([field, given]) => `${field} = ${JSON.stringify(given.value)}`,
          ),
        )}`,
        config.deletionSettings?.enabled ? 'deletes allowed' : 'no deletes',
      ].join('; '),
    ]),
    ...Object.entries(content.subscribe?.objects ?? {}).map(([name, config]): [string, string, string] => [
      'subscribe',
      name,
      `→ ${config.destination ?? ''}; events: ${listed(
        (['create', 'update', 'delete'] as const).filter(
          (kind) => config[`${kind}Event`]?.enabled === 'always',
        ),
      )}`,
    ]),
    ...(content.proxy
      ? [['proxy', '', content.proxy.enabled ? 'enabled' : 'disabled'] as [string, string, string]]
      : []),
  ];
  return (
    <details>
      <summary>
        Config{' '}
        {version && (
          <small>
            version <code>{version.id.slice(0, 8)}</code>
            {version.createdBy ? ` by ${version.createdBy}` : ''}
            {version.createTime ? `, ${time(version.createTime)}` : ''}
          </small>
        )}
      </summary>
      <div className="overflow-auto">
        <table aria-label={props.label}>
          <thead>
            <tr>
              <th scope="col">Action</th>
              <th scope="col">Object</th>
              <th scope="col">As set</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(([action, object, detail]) => (
              <tr key={`${action}/${object}`}>
                <td>{action}</td>
                <td>{object}</td>
                <td className="wrap">{detail}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}
