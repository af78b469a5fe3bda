import { useState } from 'react';
import { call, projectPath, type DeliveryAttempt, type Destination, type Page, type Problem } from '../api';
import { ActionButton, Badge, Field, Loading, ProblemNote, time, toProblem, useLoad } from '../ui';

export function DestinationsView({ project }: { project: string }) {
  const list = useLoad(() => call<Destination[]>('GET', `${projectPath(project)}/destinations`), [project]);
  return (
    <>
      <h1>Deliveries</h1>
      <p>Webhook destinations receive every record a read delivers, signed with their secret.</p>
      <Loading loading={list.loading && !list.value} what="destinations" />
      <ProblemNote problem={list.problem} />
      {list.value?.length === 0 && <p>No destinations yet.</p>}
      {list.value?.map((destination) => (
        <DestinationCard
          key={destination.id}
          project={project}
          destination={destination}
          onChange={() => void list.reload()}
        />
      ))}
      <CreateDestination project={project} onCreated={() => void list.reload()} />
    </>
  );
}

function DestinationCard(props: { project: string; destination: Destination; onChange: () => void }) {
  const { destination } = props;
  const [secret, setSecret] = useState<string>();
  const path = `${projectPath(props.project)}/destinations/${encodeURIComponent(destination.id)}`;
  return (
    <article aria-label={`Destination ${destination.name}`}>
      <header className="card-head">
        <strong>{destination.name}</strong>
        {destination.disabled ? (
          <Badge tone="bad">
            disabled {destination.disableTime ? `since ${time(destination.disableTime)}` : ''}
          </Badge>
        ) : (
          <DeliveryState path={`${path}/attempts`} />
        )}
      </header>
      <p className="wrap">
        {destination.type !== 'webhook' && <Badge tone="muted">{destination.type}</Badge>}{' '}
        <code>{destination.metadata.url ?? destination.metadata.serverUrl}</code>
      </p>
      <div className="actions">
        {destination.disabled && (
          <ActionButton
            label="Re-enable"
            ariaLabel={`Re-enable ${destination.name}`}
            run={() =>
              call('PATCH', path, { body: { updateMask: ['disabled'], destination: { disabled: false } } })
            }
            onDone={props.onChange}
          />
        )}
        {destination.type === 'webhook' && (
          <ActionButton
            label="Rotate signing secret"
            ariaLabel={`Rotate the signing secret of ${destination.name}`}
            className="secondary outline"
            run={() => call<Destination>('GET', path, { query: { rotate: true } })}
            onDone={(result) =>
              setSecret((result as Destination).secrets?.signingSecret as string | undefined)
            }
          />
        )}
      </div>
      <Attempts path={`${path}/attempts`} name={destination.name} />
      {secret && (
        <p role="status">
          New signing secret (shown once; the previous one keeps signing during the grace period):{' '}
          <code className="wrap">{secret}</code>
        </p>
      )}
    </article>
  );
}

/**
 * An enabled destination's state from its latest answered attempt: one that failed every attempt
 * since is failing, not delivering (it is disabled only after FERRY_DESTINATION_DISABLE_AFTER_SECONDS).
 */
function DeliveryState({ path }: { path: string }) {
  // Kept current: a delivery in flight is answered within seconds.
  const latest = useLoad(
    () => call<Page<DeliveryAttempt>>('GET', path, { query: { pageSize: 10 } }),
    [path],
    (value) => (value?.results[0]?.pending ? 2_000 : 15_000),
  );
  if (!latest.value) return <Badge tone="muted">checking…</Badge>;
  const answered = latest.value.results.find((attempt) => !attempt.pending);
  if (!answered)
    return <Badge tone="muted">{latest.value.results.length ? 'sending…' : 'no deliveries yet'}</Badge>;
  if (answered.delivered) return <Badge tone="good">delivering</Badge>;
  return (
    <span>
      <Badge tone="bad">failing</Badge>{' '}
      <small>
        last attempt: {answered.status ?? 'no answer'}, {time(answered.createTime)}
      </small>
    </span>
  );
}

function CreateDestination({ project, onCreated }: { project: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  return (
    <article aria-labelledby="new-destination">
      <h2 id="new-destination">New webhook destination</h2>
      <form
        noValidate
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setProblem(undefined);
          try {
            await call('POST', `${projectPath(project)}/destinations`, {
              body: { name, type: 'webhook', metadata: { url } },
            });
            setName('');
            setUrl('');
            onCreated();
          } catch (error) {
            setProblem(toProblem(error));
          } finally {
            setBusy(false);
          }
        }}
      >
        <div className="grid">
          <Field
            id="destination-name"
            label="Name"
            field="name"
            value={name}
            onChange={setName}
            problem={problem}
          />
          <Field
            id="destination-url"
            label="Webhook URL"
            field="metadata.url"
            type="url"
            value={url}
            onChange={setUrl}
            problem={problem}
          />
        </div>
        <ProblemNote problem={problem} skip={['name', 'metadata.url', 'metadata']} />
        <button type="submit" aria-busy={busy || undefined} disabled={busy}>
          Create
        </button>
      </form>
    </article>
  );
}

/** The latest attempts to this destination: what was sent, what the receiver answered, how fast. */
function Attempts({ path, name }: { path: string; name: string }) {
  const [tokens, setTokens] = useState<string[]>([]);
  const token = tokens[tokens.length - 1];
  const page = useLoad(
    () => call<Page<DeliveryAttempt>>('GET', path, { query: { pageSize: 10, pageToken: token } }),
    [path, token],
  );
  return (
    <details open>
      <summary>Recent attempts</summary>
      <ProblemNote problem={page.problem} />
      {page.value?.results.length === 0 && <p>No attempts yet.</p>}
      {page.value && page.value.results.length > 0 && (
        <div className="overflow-auto">
          <table aria-label={`Delivery attempts to ${name}`}>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Message</th>
                <th scope="col">Status</th>
                <th scope="col">Latency</th>
                <th scope="col">Response</th>
              </tr>
            </thead>
            <tbody>
              {page.value.results.map((attempt) => (
                <tr key={attempt.id}>
                  <td>{time(attempt.createTime)}</td>
                  <td>
                    <code>{attempt.messageId.slice(0, 12)}</code> {attempt.kind}
                    {attempt.attempt > 1 ? `, attempt ${attempt.attempt}` : ''}
                  </td>
                  <td>
                    {attempt.pending ? (
                      <Badge tone="busy">pending</Badge>
                    ) : (
                      <Badge tone={attempt.delivered ? 'good' : 'bad'}>{attempt.status ?? 'no answer'}</Badge>
                    )}
                  </td>
                  <td>{attempt.durationMs} ms</td>
                  <td className="result">
                    {(attempt.error ?? attempt.responseExcerpt) && (
                      <code>{attempt.error ?? attempt.responseExcerpt}</code>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {page.value && (tokens.length > 0 || !page.value.pagination.done) && (
        <div className="actions">
          <button type="button" className="secondary" disabled={!tokens.length} onClick={() => setTokens([])}>
            Newest attempts
          </button>
          <button
            type="button"
            className="secondary"
            disabled={page.value.pagination.done}
            onClick={() => setTokens([...tokens, page.value!.pagination.nextPageToken!])}
          >
            Older attempts
          </button>
        </div>
      )}
    </details>
  );
}
