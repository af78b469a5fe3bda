import { useState } from 'react';
import {
  call,
  projectPath,
  type Destination,
  type EventTopicRoute,
  type NotificationEvent,
  type Page,
  type Topic,
  type TopicDestinationRoute,
} from '../api';
import { Badge, Loading, ProblemNote, time, useLoad } from '../ui';

interface Routing {
  topics: Map<string, Topic>;
  destinations: Map<string, Destination>;
  eventRoutes: EventTopicRoute[];
  topicRoutes: TopicDestinationRoute[];
}

export function EventsView({ project }: { project: string }) {
  const [tokens, setTokens] = useState<string[]>([]);
  const token = tokens[tokens.length - 1];
  const base = projectPath(project);
  const events = useLoad(
    () =>
      call<Page<NotificationEvent>>('GET', `${base}/events`, { query: { pageSize: 25, pageToken: token } }),
    [base, token],
  );
  const routing = useLoad<Routing>(async () => {
    const [topics, destinations, eventRoutes, topicRoutes] = await Promise.all([
      call<Topic[]>('GET', `${base}/topics`),
      call<Destination[]>('GET', `${base}/destinations`),
      call<EventTopicRoute[]>('GET', `${base}/notification-event-topic-routes`),
      call<TopicDestinationRoute[]>('GET', `${base}/topic-destination-routes`),
    ]);
    return {
      topics: new Map(topics.map((topic) => [topic.id, topic])),
      destinations: new Map(destinations.map((destination) => [destination.id, destination])),
      eventRoutes,
      topicRoutes,
    };
  }, [base]);

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
          <table className="striped">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Routed to</th>
                <th scope="col">Data</th>
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
    </>
  );
}
