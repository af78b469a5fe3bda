import { useState } from 'react';
import { call, projectPath, type NotificationEvent, type Page } from '../api';
import { ActionButton, Badge, Loading, ProblemNote, time, useLoad } from '../ui';
import { loadRouting, RoutingEditor } from './Routing';

export function EventsView({ project }: { project: string }) {
  const [tokens, setTokens] = useState<string[]>([]);
  const token = tokens[tokens.length - 1];
  const base = projectPath(project);
  const events = useLoad(
    () =>
      call<Page<NotificationEvent>>('GET', `${base}/events`, { query: { pageSize: 25, pageToken: token } }),
    [base, token],
  );
  const routing = useLoad(() => loadRouting(base), [base]);

  /** Where an event type goes: its topics, and each topic's destinations. */
  const routesOf = (eventType: string) => {
    const value = routing.value;
    if (!value) return [];
    return value.eventRoutes
      .filter((route) => route.eventType === eventType)
      .map((route) => ({
        topic: value.topics.get(route.topicId)?.name ?? route.topicId,
        destinations: value.topicRoutes
          .filter((topicRoute) => topicRoute.topicId === route.topicId)
          .map(
            (topicRoute) =>
              value.destinations.get(topicRoute.destinationId)?.name ?? topicRoute.destinationId,
          ),
      }));
  };

  return (
    <>
      <h1>Events</h1>
      <ProblemNote problem={events.problem ?? routing.problem} />
      <Loading loading={events.loading && !events.value} what="events" />
      {events.value?.results.length === 0 && <p>No events yet.</p>}
      {events.value && events.value.results.length > 0 && (
        <div className="overflow-auto">
          <table className="striped" aria-label="Events, newest first">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Routed to</th>
                <th scope="col">Data</th>
                <th scope="col">Send again</th>
              </tr>
            </thead>
            <tbody>
              {events.value.results.map((event) => {
                const routes = routesOf(event.eventType);
                return (
                  <tr key={event.id}>
                    <td>{time(event.createTime)}</td>
                    <td>
                      <code>{event.eventType}</code>
                    </td>
                    <td>
                      {!event.routedTime ? (
                        <Badge tone="busy">waiting</Badge>
                      ) : routes.length ? (
                        routes.map((route) => (
                          <div key={route.topic}>
                            {route.topic} → {route.destinations.join(', ') || 'no destination'}
                          </div>
                        ))
                      ) : (
                        <Badge tone="muted">no route</Badge>
                      )}
                    </td>
                    <td>
                      <details>
                        <summary>data</summary>
                        <pre>{JSON.stringify(event.data, null, 2)}</pre>
                      </details>
                    </td>
                    <td>
                      <Redeliver base={base} eventId={event.id} eventType={event.eventType} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <div className="actions">
        <button type="button" className="secondary" disabled={!tokens.length} onClick={() => setTokens([])}>
          Newest
        </button>
        <button
          type="button"
          className="secondary"
          disabled={!events.value?.pagination.nextPageToken || events.value.pagination.done}
          onClick={() => setTokens([...tokens, events.value!.pagination.nextPageToken!])}
        >
          Older
        </button>
      </div>
      <RoutingEditor project={project} routing={routing.value} onChange={() => void routing.reload()} />
    </>
  );
}

/** Sends an event again to every routed destination that has not accepted it (same webhook-id). */
function Redeliver({ base, eventId, eventType }: { base: string; eventId: string; eventType: string }) {
  const [sent, setSent] = useState<number>();
  if (sent !== undefined)
    return (
      <small role="status">
        {sent
          ? `sent again to ${sent} destination${sent === 1 ? '' : 's'}`
          : 'no routed destination is waiting for it'}
      </small>
    );
  return (
    <ActionButton
      label="Send again"
      ariaLabel={`Send the ${eventType} event ${eventId.slice(0, 8)} again`}
      className="secondary outline"
      run={() =>
        call<{ destinationIds: string[] }>('POST', `${base}/events/${encodeURIComponent(eventId)}:retry`)
      }
      onDone={(result) => setSent((result as { destinationIds: string[] }).destinationIds.length)}
    />
  );
}
