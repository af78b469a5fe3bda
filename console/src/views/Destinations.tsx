import { useState } from 'react';
import {
  call,
  projectPath,
  type DeliveryAttempt,
  type Destination,
  type DestinationTest,
  type Page,
  type Problem,
} from '../api';
import { ActionButton, Badge, Field, Loading, ProblemNote, time, toProblem, useLoad } from '../ui';
import { href } from '../App';
import { destinationExamples } from '../openapi';
import { DestinationSettings, JsonField } from './DestinationSettings';

export function DestinationsView({ project }: { project: string }) {
  const list = useLoad(() => call<Destination[]>('GET', `${projectPath(project)}/destinations`), [project]);
  return (
    <>
      <h1>Deliveries</h1>
      <p>
        Destinations receive every record a read delivers and the events routed to them: webhooks (signed with
        their secret), queues, streams, buckets and databases.
      </p>
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
  const [tested, setTested] = useState<DestinationTest>();
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
        <ActionButton
          label="Send test message"
          ariaLabel={`Send a test message to ${destination.name}`}
          className="secondary"
          run={() => call<DestinationTest>('POST', `${path}:test`)}
          onDone={(result) => setTested(result as DestinationTest)}
        />
        <ActionButton
          label="Delete"
          ariaLabel={`Delete ${destination.name}`}
          confirm={`Delete ${destination.name} and its delivery history?`}
          className="secondary outline"
          run={() => call('DELETE', path)}
          onDone={props.onChange}
        />
      </div>
      <DestinationSettings path={path} destination={destination} onSaved={props.onChange} />
      <Attempts project={props.project} path={`${path}/attempts`} name={destination.name} />
      {tested && <TestAnswer name={destination.name} answer={tested} />}
      {secret && (
        <p role="status">
          New signing secret (shown once; the previous one keeps signing during the grace period):{' '}
          <code className="wrap">{secret}</code>
        </p>
      )}
    </article>
  );
}

/** What the destination said to a test message (nothing recorded, its health unchanged). */
function TestAnswer({ name, answer }: { name: string; answer: DestinationTest }) {
  return (
    <p role="status" aria-label={`Test message to ${name}`} className="wrap">
      {answer.delivered ? <Badge tone="good">test delivered</Badge> : <Badge tone="bad">test failed</Badge>}{' '}
      {answer.status !== undefined && <code>HTTP {answer.status}</code>} in {answer.durationMs} ms
      {answer.error ? `: ${answer.error}` : answer.answer ? `: ${answer.answer}` : ''}{' '}
      <small>
        (message <code>{answer.messageId}</code>)
      </small>
    </p>
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

/**
 * A new destination of any type: a webhook by its URL; the other types by their metadata and secrets
 * (JSON, prefilled from the API's example for the type), so every type the API takes is offered.
 */
function CreateDestination({ project, onCreated }: { project: string; onCreated: () => void }) {
  const examples = useLoad(destinationExamples, []);
  const [type, setType] = useState('webhook');
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [metadata, setMetadata] = useState('{}');
  const [secrets, setSecrets] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  const documented = examples.value?.map((example) => example.type) ?? [];
  const types = documented.length ? documented : ['webhook'];
  const chooseType = (next: string) => {
    const example = examples.value?.find((candidate) => candidate.type === next);
    setType(next);
    setMetadata(JSON.stringify(example?.metadata ?? {}, null, 2));
    setSecrets(example?.secrets ? JSON.stringify(example.secrets, null, 2) : '');
    setProblem(undefined);
  };
  const parsed = (label: string, text: string) => {
    if (!text.trim()) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw { status: 400, title: 'Bad JSON', detail: `${label} is not JSON.`, issues: [] } satisfies Problem;
    }
  };
  return (
    <article aria-labelledby="new-destination">
      <h2 id="new-destination">New destination</h2>
      <form
        noValidate
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setProblem(undefined);
          try {
            const body =
              type === 'webhook'
                ? { name, type, metadata: { url } }
                : { name, type, metadata: parsed('Metadata', metadata), secrets: parsed('Secrets', secrets) };
            await call('POST', `${projectPath(project)}/destinations`, { body });
            setName('');
            setUrl('');
            onCreated();
          } catch (error) {
            setProblem(error instanceof Error ? toProblem(error) : (error as Problem));
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
          <div className="field">
            <label htmlFor="destination-type">Type</label>
            <select id="destination-type" value={type} onChange={(event) => chooseType(event.target.value)}>
              {types.map((name) => (
                <option key={name}>{name}</option>
              ))}
            </select>
          </div>
        </div>
        {type === 'webhook' ? (
          <Field
            id="destination-url"
            label="Webhook URL"
            field="metadata.url"
            type="url"
            value={url}
            onChange={setUrl}
            problem={problem}
          />
        ) : (
          <div className="grid">
            <JsonField
              id="destination-metadata"
              label="Metadata"
              field="metadata"
              value={metadata}
              onChange={setMetadata}
              problem={problem}
            />
            <JsonField
              id="destination-secrets"
              label="Secrets"
              field="secrets"
              value={secrets}
              onChange={setSecrets}
              problem={problem}
            />
          </div>
        )}
        <ProblemNote problem={problem} skip={['name', 'metadata', 'secrets']} />
        <button type="submit" aria-busy={busy || undefined} disabled={busy}>
          Create
        </button>
      </form>
    </article>
  );
}

/** The latest attempts to this destination: what was sent, what the receiver answered, how fast. */
function Attempts({ project, path, name }: { project: string; path: string; name: string }) {
  const [tokens, setTokens] = useState<string[]>([]);
  const token = tokens[tokens.length - 1];
  const page = useLoad(
    () => call<Page<DeliveryAttempt>>('GET', path, { query: { pageSize: 10, pageToken: token } }),
    [path, token],
  );
  const [shown, setShown] = useState<{ attemptId: string; message?: string; problem?: Problem }>();
  const show = async (attemptId: string) => {
    try {
      const message = await call<{ body: string }>('GET', `${path}/${attemptId}/message`);
      setShown({ attemptId, message: JSON.stringify(JSON.parse(message.body), null, 2) });
    } catch (error) {
      setShown({ attemptId, problem: toProblem(error) });
    }
  };
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
                    {attempt.attempt > 1 ? `, attempt ${attempt.attempt}` : ''}{' '}
                    <button
                      type="button"
                      className="link"
                      aria-label={`Show message ${attempt.messageId.slice(0, 12)}`}
                      onClick={() => void show(attempt.id)}
                    >
                      show
                    </button>
                    {attempt.operationId && (
                      <>
                        {' '}
                        <a
                          href={href(project, 'operations', attempt.operationId)}
                          aria-label={`Operation ${attempt.operationId.slice(0, 8)} of message ${attempt.messageId.slice(0, 12)}`}
                        >
                          operation
                        </a>
                      </>
                    )}
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
      {shown && (
        <section aria-label={`Message of attempt ${shown.attemptId}`}>
          <ProblemNote problem={shown.problem} />
          {shown.message && (
            <pre className="yaml" tabIndex={0}>
              {shown.message}
            </pre>
          )}
        </section>
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
