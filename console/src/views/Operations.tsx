import { useState } from 'react';
import { call, projectPath, type Operation, type OperationLog, type Page } from '../api';
import { ActionButton, Badge, Loading, ProblemNote, StatusBadge, time, useLoad } from '../ui';
import { href } from '../App';
import { temporalInstallationUrl } from './Installations';

/** A running read's progress: a bar against the provider's estimate, else a count. */
export function Progress({ operation }: { operation: Operation }) {
  const progress = operation.metadata.progress;
  if (!progress || progress.recordsProcessed === undefined) return null;
  const total = progress.recordsEstimatedTotal;
  const label = `${progress.recordsProcessed}${total !== undefined ? ` of ${total}` : ''} records`;
  if (operation.status !== 'in_progress') return <span>{label}</span>;
  return (
    <span className="progress">
      <progress
        value={total ? Math.min(progress.recordsProcessed, total) : undefined}
        max={total || undefined}
        aria-label={`Progress of operation ${operation.id.slice(0, 8)}`}
      />
      <small>{label}</small>
    </span>
  );
}

const running = (operations?: Operation[]) =>
  operations?.some((operation) => operation.status === 'in_progress');

export function OperationsView(props: { project: string; integrationId: string; installationId: string }) {
  const base = `${projectPath(props.project)}/integrations/${encodeURIComponent(props.integrationId)}/installations/${encodeURIComponent(props.installationId)}/operations`;
  const [pages, setPages] = useState<string[]>([]);
  const token = pages[pages.length - 1];
  const page = useLoad(
    () => call<Page<Operation>>('GET', base, { query: { pageSize: 20, pageToken: token } }),
    [base, token],
    (value) => (running(value?.results) ? 2000 : undefined),
  );
  return (
    <>
      <nav aria-label="Breadcrumb">
        <ul>
          <li>
            <a href={href(props.project, 'installations')}>Installations</a>
          </li>
          <li>Operations of installation {props.installationId.slice(0, 8)}</li>
        </ul>
      </nav>
      <h1>Operations</h1>
      <p>
        <a href={temporalInstallationUrl(props.installationId)} target="_blank" rel="noreferrer">
          The installation’s workflow in the Temporal UI
        </a>
      </p>
      <Loading loading={page.loading && !page.value} what="operations" />
      <ProblemNote problem={page.problem} />
      {page.value && (
        <>
          <OperationTable project={props.project} operations={page.value.results} />
          <div className="actions">
            <button type="button" className="secondary" disabled={!pages.length} onClick={() => setPages([])}>
              Newest
            </button>
            <button
              type="button"
              className="secondary"
              disabled={page.value.pagination.done || !page.value.pagination.nextPageToken}
              onClick={() => setPages([...pages, page.value!.pagination.nextPageToken!])}
            >
              Older
            </button>
          </div>
        </>
      )}
    </>
  );
}

function OperationTable({ project, operations }: { project: string; operations: Operation[] }) {
  if (!operations.length) return <p>No operations yet.</p>;
  return (
    <div className="overflow-auto">
      <table className="striped">
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Action</th>
            <th scope="col">Status</th>
            <th scope="col">Records</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {operations.map((operation) => (
            <tr key={operation.id}>
              <td>
                <a href={href(project, 'operations', operation.id)}>{time(operation.createTime)}</a>
              </td>
              <td>
                {operation.actionType}
                {operation.metadata.readType ? ` (${operation.metadata.readType})` : ''}{' '}
                {operation.metadata.objects?.join(', ')}
                {operation.metadata.tool}
              </td>
              <td>
                <StatusBadge status={operation.status} />
              </td>
              <td>
                <Progress operation={operation} />
              </td>
              <td className="result">{operation.result}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function OperationView({ project, operationId }: { project: string; operationId: string }) {
  const path = `${projectPath(project)}/operations/${encodeURIComponent(operationId)}`;
  const operation = useLoad(
    () => call<Operation>('GET', path),
    [path],
    (value) => (value?.status === 'in_progress' ? 1500 : undefined),
  );
  const value = operation.value;
  return (
    <>
      {value && (
        <nav aria-label="Breadcrumb">
          <ul>
            <li>
              <a href={href(project, 'installations')}>Installations</a>
            </li>
            <li>
              <a href={href(project, 'installations', value.integrationId, value.installationId)}>
                Operations
              </a>
            </li>
            <li>{operationId.slice(0, 8)}</li>
          </ul>
        </nav>
      )}
      <h1>Operation {operationId.slice(0, 8)}</h1>
      <Loading loading={operation.loading && !value} what="the operation" />
      <ProblemNote problem={operation.problem} />
      {value && (
        <article>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={value.status} />
            </dd>
            <dt>Action</dt>
            <dd>
              {value.actionType}{' '}
              {value.metadata.readType && <Badge tone="muted">{value.metadata.readType}</Badge>}{' '}
              {value.metadata.objects?.join(', ')}
              {value.metadata.tool}
            </dd>
            {value.metadata.arguments && (
              <>
                <dt>Arguments</dt>
                <dd>
                  <code>{JSON.stringify(value.metadata.arguments)}</code>
                </dd>
              </>
            )}
            <dt>Progress</dt>
            <dd>
              <Progress operation={value} />
            </dd>
            <dt>Result</dt>
            <dd>{value.result ?? '—'}</dd>
            <dt>Started / updated</dt>
            <dd>
              {time(value.createTime)} / {time(value.updateTime)}
            </dd>
            {value.metadata.temporal && (
              <>
                <dt>Temporal</dt>
                <dd>
                  <a href={value.metadata.temporal.url} target="_blank" rel="noreferrer">
                    {value.metadata.temporal.workflowId}
                  </a>
                </dd>
              </>
            )}
          </dl>
          {value.status === 'failure' && (value.actionType === 'read' || value.actionType === 'write') && (
            <ActionButton
              label="Retry"
              run={() => call<{ operationId: string }>('POST', `${path}:retry`)}
              onDone={(result) =>
                (location.hash = href(project, 'operations', (result as { operationId: string }).operationId))
              }
            />
          )}
        </article>
      )}
      {/* Keyed by status: the log is read again when the operation finishes. */}
      <Logs key={value?.status} path={`${path}/logs`} live={value?.status === 'in_progress'} />
    </>
  );
}

const LOG_PAGE = 50;

/** A log entry's details, one per line; values that hold JSON (the API sends every value as a string) are shown as it. */
function detailsText(details: Record<string, string>): string {
  const shown = (value: string) => {
    try {
      const parsed: unknown = JSON.parse(value);
      return typeof parsed === 'object' && parsed !== null ? JSON.stringify(parsed, null, 2) : value;
    } catch {
      return value;
    }
  };
  return Object.entries(details)
    .map(([name, value]) => `${name}: ${shown(value)}`)
    .join('\n');
}

/** The API answers an operation's log whole (at most 10,000 entries); the console shows it a page at a time. */
function Logs({ path, live }: { path: string; live: boolean }) {
  const [shown, setShown] = useState(LOG_PAGE);
  const logs = useLoad(
    () => call<OperationLog[]>('GET', path),
    [path],
    () => (live ? 3000 : undefined),
  );
  const entries = logs.value ?? [];
  return (
    <section aria-labelledby="logs-title">
      <h2 id="logs-title">
        Logs <small>({entries.length} entries)</small>
      </h2>
      <ProblemNote problem={logs.problem} />
      {entries.length === 0 && !logs.loading && <p>No log entries.</p>}
      <ol className="logs">
        {entries.slice(0, shown).map((log, index) => (
          <li key={index} className={`log-${log.severity.toLowerCase()}`}>
            <time dateTime={log.timestamp}>{time(log.timestamp)}</time>{' '}
            <Badge tone={log.severity === 'ERROR' ? 'bad' : log.severity === 'WARN' ? 'busy' : 'muted'}>
              {log.severity}
            </Badge>{' '}
            {log.message.msg}
            {log.message.error && <span className="field-error"> {log.message.error}</span>}
            {Object.keys(log.message.details ?? {}).length > 0 && (
              <details>
                <summary>details</summary>
                <pre>{detailsText(log.message.details ?? {})}</pre>
              </details>
            )}
          </li>
        ))}
      </ol>
      {entries.length > shown && (
        <button type="button" className="secondary" onClick={() => setShown(shown + LOG_PAGE)}>
          Show {Math.min(LOG_PAGE, entries.length - shown)} more of {entries.length - shown}
        </button>
      )}
    </section>
  );
}
