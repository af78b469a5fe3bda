import { useState } from 'react';
import { call, projectPath, type Connection } from '../api';
import { ActionButton, Badge, Loading, ProblemNote, StatusBadge, time, useLoad } from '../ui';

export function ConnectionsView({ project }: { project: string }) {
  const list = useLoad(() => call<Connection[]>('GET', `${projectPath(project)}/connections`), [project]);
  const connections = [...(list.value ?? [])].sort(
    (a, b) => Number(b.status === 'bad_credentials') - Number(a.status === 'bad_credentials'),
  );
  return (
    <>
      <h1>Connections</h1>
      <Loading loading={list.loading && !list.value} what="connections" />
      <ProblemNote problem={list.problem} />
      {list.value?.length === 0 && <p>No connections yet.</p>}
      {connections.length > 0 && (
        <div className="overflow-auto">
          <table>
            <thead>
              <tr>
                <th scope="col">Customer</th>
                <th scope="col">Provider</th>
                <th scope="col">Status</th>
                <th scope="col">Updated</th>
                <th scope="col">Re-authorize</th>
                <th scope="col">Delete</th>
              </tr>
            </thead>
            <tbody>
              {connections.map((connection) => (
                <ConnectionRow
                  key={connection.id}
                  project={project}
                  connection={connection}
                  onDeleted={() => void list.reload()}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function ConnectionRow(props: { project: string; connection: Connection; onDeleted: () => void }) {
  const { project, connection } = props;
  const [url, setUrl] = useState<string>();
  const bad = connection.status === 'bad_credentials';
  return (
    <tr className={bad ? 'bad-row' : undefined}>
      <td>
        {connection.group.groupName} <code>{connection.group.groupRef}</code>
        <br />
        <small>
          {connection.consumer.consumerName} ({connection.consumer.consumerRef})
        </small>
      </td>
      <td>
        {connection.provider} <small>{connection.authScheme}</small>
      </td>
      <td>{bad ? <Badge tone="bad">bad credentials</Badge> : <StatusBadge status={connection.status} />}</td>
      <td>{time(connection.updateTime)}</td>
      <td>
        {connection.authScheme === 'oauth2/authorizationCode' &&
          (url ? (
            <a href={url} target="_blank" rel="noreferrer">
              Open the authorization page
            </a>
          ) : (
            <ActionButton
              label="Get link"
              ariaLabel={`Get a re-authorization link for ${connection.group.groupRef}`}
              className={bad ? undefined : 'secondary outline'}
              run={() =>
                call<string>(
                  'PATCH',
                  `${projectPath(project)}/connections/${encodeURIComponent(connection.id)}:oauth-update`,
                )
              }
              onDone={(result) => setUrl(result as string)}
            />
          ))}
      </td>
      <td>
        {/* Refused (409, shown here) while an installation uses the connection. */}
        <ActionButton
          label="Delete"
          ariaLabel={`Delete the ${connection.provider} connection of ${connection.group.groupRef}`}
          confirm={`Delete the ${connection.provider} connection of ${connection.group.groupRef} for good?`}
          className="secondary outline"
          run={() =>
            call('DELETE', `${projectPath(project)}/connections/${encodeURIComponent(connection.id)}`)
          }
          onDone={props.onDeleted}
        />
      </td>
    </tr>
  );
}
