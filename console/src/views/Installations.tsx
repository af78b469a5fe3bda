import { useState } from 'react';
import {
  call,
  getConfig,
  projectPath,
  type Installation,
  type InstallationSchedule,
  type Integration,
} from '../api';
import { ActionButton, Badge, Loading, ProblemNote, StatusBadge, time, useLoad } from '../ui';
import { href } from '../App';
import { InstallationConfigDetails } from './InstallationConfig';

interface Loaded {
  installations: Installation[];
  integrations: Map<string, Integration>;
}

export function temporalInstallationUrl(installationId: string): string {
  return getConfig().temporal.installationUrl.replace('{installationId}', encodeURIComponent(installationId));
}

export function InstallationsView({ project }: { project: string }) {
  const [filter, setFilter] = useState('');
  const loaded = useLoad<Loaded>(async () => {
    const [installations, integrations] = await Promise.all([
      call<Installation[]>('GET', `${projectPath(project)}/installations`),
      call<Integration[]>('GET', `${projectPath(project)}/integrations`),
    ]);
    return { installations, integrations: new Map(integrations.map((item) => [item.id, item])) };
  }, [project]);

  const groups = new Map<string, Installation[]>();
  for (const installation of loaded.value?.installations ?? []) {
    const ref = installation.group?.groupRef ?? installation.connection.group.groupRef;
    const name = installation.group?.groupName ?? installation.connection.group.groupName;
    const text = `${ref} ${name}`.toLowerCase();
    if (filter && !text.includes(filter.toLowerCase())) continue;
    groups.set(ref, [...(groups.get(ref) ?? []), installation]);
  }

  return (
    <>
      <h1>Installations</h1>
      <label htmlFor="group-filter">
        Find a customer (group reference or name)
        <input
          id="group-filter"
          type="search"
          value={filter}
          onChange={(event) => setFilter(event.target.value)}
        />
      </label>
      <Loading loading={loaded.loading && !loaded.value} what="installations" />
      <ProblemNote problem={loaded.problem} />
      {loaded.value && groups.size === 0 && <p>No installations{filter ? ' match' : ' yet'}.</p>}
      {[...groups].map(([groupRef, installations]) => (
        <section key={groupRef} aria-labelledby={`group-${groupRef}`}>
          <h2 id={`group-${groupRef}`}>
            {installations[0].group?.groupName ?? installations[0].connection.group.groupName}{' '}
            <small>
              <code>{groupRef}</code>
            </small>
          </h2>
          {installations.map((installation) => (
            <InstallationCard
              key={installation.id}
              project={project}
              installation={installation}
              integration={loaded.value!.integrations.get(installation.integrationId)}
              onChange={() => void loaded.reload()}
            />
          ))}
        </section>
      ))}
    </>
  );
}

function InstallationCard(props: {
  project: string;
  installation: Installation;
  integration?: Integration;
  onChange: () => void;
}) {
  const { project, installation, integration } = props;
  const [note, setNote] = useState<string>();
  const [confirming, setConfirming] = useState(false);
  const groupRef = installation.group?.groupRef ?? installation.connection.group.groupRef;
  const integrationPath = `${projectPath(project)}/integrations/${encodeURIComponent(installation.integrationId)}`;
  const installationPath = `${integrationPath}/installations/${encodeURIComponent(installation.id)}`;
  const objects = Object.entries(installation.config.content.read?.objects ?? {});
  // Next fires and pauses come from the workflow itself; without Temporal the rest still shows.
  // A workflow just started (or restarted by repair) answers a moment later: ask again until it
  // does, then keep the next fires and running reads current.
  // After Pause or Resume, ask often until the workflow shows it (a Signal takes a moment).
  const expected = note?.startsWith('Paused')
    ? 'reads paused'
    : note?.startsWith('Resumed')
      ? 'reads active'
      : undefined;
  const schedule = useLoad(
    () => call<InstallationSchedule>('GET', `${installationPath}/schedule`),
    [installationPath, note],
    (value) => (!value?.ready ? 2_000 : expected && readsState(value) !== expected ? 1_000 : 15_000),
  );
  const reads = readsState(schedule.value);
  const planned = new Map(schedule.value?.objects.map((object) => [object.objectName, object]));
  const name = integration?.name ?? installation.integrationId;
  const read = async (objectName: string, sinceTimestamp?: string) => {
    const result = await call<{ operationId: string }>(
      'POST',
      `${projectPath(project)}/integrations/${encodeURIComponent(installation.integrationId)}/objects/${encodeURIComponent(objectName)}`,
      { host: 'read', body: { groupRef, mode: 'async', ...(sinceTimestamp && { sinceTimestamp }) } },
    );
    setNote(`Started operation ${result.operationId}.`);
    location.hash = href(project, 'operations', result.operationId);
  };
  return (
    <article aria-label={`${name} for ${groupRef}`}>
      <header className="card-head">
        <strong>{name}</strong>
        {installation.healthStatus === 'healthy' ? (
          <Badge tone="good">healthy</Badge>
        ) : (
          <Badge tone="bad">degraded</Badge>
        )}
        <span>
          last operation: <StatusBadge status={installation.lastOperationStatus} />
        </span>
        <span>
          connection: <StatusBadge status={installation.connection.status} />
        </span>
        {reads && <Badge tone={reads === 'reads active' ? 'good' : 'busy'}>{reads}</Badge>}
      </header>
      {installation.healthReason && (
        <p className="health-reason" aria-label={`Why ${name} for ${groupRef} is degraded`}>
          {installation.healthReason}
        </p>
      )}
      {objects.length > 0 ? (
        <div className="overflow-auto">
          <table>
            <thead>
              <tr>
                <th scope="col">Object</th>
                <th scope="col">Schedule</th>
                <th scope="col">Next read</th>
                <th scope="col">Destination</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {objects.map(([objectName, config]) => (
                <tr key={objectName}>
                  <td>{objectName}</td>
                  <td>
                    <code>{config.schedule}</code> {config.disabled && <Badge tone="muted">disabled</Badge>}
                  </td>
                  <td>
                    <NextRead object={planned.get(objectName)} />
                  </td>
                  <td>{config.destination ?? ''}</td>
                  <td className="actions">
                    <ActionButton
                      label="Read last 24 h"
                      ariaLabel={`Read ${objectName} updated in the last 24 hours`}
                      className="secondary"
                      run={() => read(objectName, new Date(Date.now() - 86_400_000).toISOString())}
                    />
                    <ActionButton
                      label="Backfill"
                      ariaLabel={`Backfill ${objectName}`}
                      className="secondary"
                      run={() => read(objectName)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p>This installation reads no objects.</p>
      )}
      <InstallationConfigDetails
        label={`Config of ${name} for ${groupRef}`}
        content={installation.config.content}
        version={installation.config}
      />
      <footer className="actions">
        <a href={href(project, 'installations', installation.integrationId, installation.id)} role="button">
          Operations
        </a>
        <ActionButton
          label="Pause reads"
          ariaLabel={`Pause reads of ${name} for ${groupRef}`}
          className={reads === 'reads paused' ? 'secondary' : 'secondary outline'}
          pressed={reads === undefined ? undefined : reads === 'reads paused'}
          run={() => call('POST', `${installationPath}:pause`, { host: 'read', body: {} })}
          onDone={() => setNote('Paused: no new reads start until resumed.')}
        />
        <ActionButton
          label="Resume reads"
          ariaLabel={`Resume reads of ${name} for ${groupRef}`}
          className="secondary outline"
          run={() => call('POST', `${installationPath}:unpause`, { host: 'read', body: {} })}
          onDone={() => setNote('Resumed: the next read is planned from now.')}
        />
        <button
          type="button"
          className="secondary outline"
          aria-label={`Uninstall ${name} for ${groupRef}`}
          onClick={() => setConfirming(true)}
        >
          Uninstall
        </button>
        <a href={temporalInstallationUrl(installation.id)} target="_blank" rel="noreferrer">
          Temporal UI
        </a>
        <small>installed {time(installation.createTime)}</small>
      </footer>
      {schedule.problem && (
        <small className="field-error">
          Schedules unavailable: {schedule.problem.detail ?? schedule.problem.title}
        </small>
      )}
      {confirming && (
        <p className="actions" role="group" aria-label={`Confirm uninstalling ${name} for ${groupRef}`}>
          Uninstall {name} for {groupRef}? Its workflow stops and its config is deleted.
          <ActionButton
            label="Confirm uninstall"
            ariaLabel={`Confirm: uninstall ${name} for ${groupRef}`}
            run={() => call('DELETE', installationPath)}
            onDone={props.onChange}
          />
          <button type="button" className="secondary outline" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </p>
      )}
      {note && <p role="status">{note}</p>}
    </article>
  );
}

/** Whether the workflow reads: every object paused, some, or none (undefined until it answers). */
function readsState(schedule: InstallationSchedule | undefined): string | undefined {
  const objects = schedule?.ready ? schedule.objects : undefined;
  if (!objects?.length) return undefined;
  const paused = objects.filter((object) => object.paused).length;
  if (paused === objects.length) return 'reads paused';
  return paused ? `reads: ${paused} of ${objects.length} paused` : 'reads active';
}

function NextRead({ object }: { object?: InstallationSchedule['objects'][number] }) {
  if (!object) return <span>…</span>;
  return (
    <span>
      {object.paused ? (
        <Badge tone="busy">paused{object.pauseNote ? `: ${object.pauseNote}` : ''}</Badge>
      ) : object.nextFireAt ? (
        <time dateTime={object.nextFireAt}>{time(object.nextFireAt)}</time>
      ) : (
        'not planned'
      )}
      {object.running && (
        <>
          {' '}
          <Badge tone="busy">{object.running.readType} running</Badge>
        </>
      )}
      {object.lastRun && (
        <small>
          <br />
          last: {object.lastRun.readType} {object.lastRun.succeeded ? 'succeeded' : 'failed'}{' '}
          {time(object.lastRun.finishedAt)}
        </small>
      )}
    </span>
  );
}
