import { useState } from 'react';
import {
  call,
  projectPath,
  type Destination,
  type EventTopicRoute,
  type Problem,
  type Topic,
  type TopicDestinationRoute,
} from '../api';
import { ActionButton, Field, Loading, ProblemNote, toProblem, useLoad } from '../ui';
import { eventTypes as listEventTypes } from '../openapi';

/** What the routing editor works on; `EventsView` loads the same to show where each event went. */
export interface Routing {
  topics: Map<string, Topic>;
  destinations: Map<string, Destination>;
  eventRoutes: EventTopicRoute[];
  topicRoutes: TopicDestinationRoute[];
}

export async function loadRouting(base: string): Promise<Routing> {
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
}

/** Topics, and the routes from event types to topics and from topics to destinations. */
export function RoutingEditor({
  project,
  routing,
  onChange,
}: {
  project: string;
  routing?: Routing;
  onChange: () => void;
}) {
  const base = projectPath(project);
  const eventTypes = useLoad(listEventTypes, []);
  if (!routing) return <Loading loading what="routing" />;
  const topics = [...routing.topics.values()];
  const destinationName = (id: string) => routing.destinations.get(id)?.name ?? id;
  return (
    <section aria-labelledby="routing">
      <h2 id="routing">Routing</h2>
      <p>
        An event reaches a destination through a topic: route event types to topics, and topics to
        destinations.
      </p>
      <div className="overflow-auto">
        <table aria-label="Topics and their routes">
          <thead>
            <tr>
              <th scope="col">Topic</th>
              <th scope="col">Event types</th>
              <th scope="col">Destinations</th>
              <th scope="col">Delete</th>
            </tr>
          </thead>
          <tbody>
            {topics.map((topic) => (
              <tr key={topic.id}>
                <td>{topic.name}</td>
                <td>
                  {routing.eventRoutes
                    .filter((route) => route.topicId === topic.id)
                    .map((route) => (
                      <div key={route.id}>
                        <code>{route.eventType}</code>{' '}
                        <ActionButton
                          label="×"
                          ariaLabel={`Stop routing ${route.eventType} to ${topic.name}`}
                          confirm={`Stop routing ${route.eventType} to ${topic.name}?`}
                          className="secondary outline small"
                          run={() => call('DELETE', `${base}/notification-event-topic-routes/${route.id}`)}
                          onDone={onChange}
                        />
                      </div>
                    ))}
                </td>
                <td>
                  {routing.topicRoutes
                    .filter((route) => route.topicId === topic.id)
                    .map((route) => (
                      <div key={route.id}>
                        {destinationName(route.destinationId)}{' '}
                        <ActionButton
                          label="×"
                          ariaLabel={`Stop sending ${topic.name} to ${destinationName(route.destinationId)}`}
                          confirm={`Stop sending ${topic.name} to ${destinationName(route.destinationId)}?`}
                          className="secondary outline small"
                          run={() => call('DELETE', `${base}/topic-destination-routes/${route.id}`)}
                          onDone={onChange}
                        />
                      </div>
                    ))}
                </td>
                <td>
                  <ActionButton
                    label="Delete"
                    ariaLabel={`Delete topic ${topic.name}`}
                    confirm={`Delete topic ${topic.name} and its routes?`}
                    className="secondary outline"
                    run={() => call('DELETE', `${base}/topics/${topic.id}`)}
                    onDone={onChange}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {topics.length === 0 && <p>No topics yet.</p>}
      <div className="grid">
        <CreateTopic base={base} onCreated={onChange} />
        <CreateRoute
          title="Route an event type"
          id="event-route"
          first={{
            label: 'Event type',
            field: 'eventType',
            options: (eventTypes.value ?? []).map((type) => [type, type]),
          }}
          second={{
            label: 'To topic',
            field: 'topicId',
            options: topics.map((topic) => [topic.id, topic.name]),
          }}
          create={(eventType, topicId) =>
            call('POST', `${base}/notification-event-topic-routes`, { body: { eventType, topicId } })
          }
          onCreated={onChange}
        />
        <CreateRoute
          title="Send a topic to a destination"
          id="topic-route"
          first={{ label: 'Topic', field: 'topicId', options: topics.map((topic) => [topic.id, topic.name]) }}
          second={{
            label: 'To destination',
            field: 'destinationId',
            options: [...routing.destinations.values()].map((destination) => [
              destination.id,
              destination.name,
            ]),
          }}
          create={(topicId, destinationId) =>
            call('POST', `${base}/topic-destination-routes`, { body: { topicId, destinationId } })
          }
          onCreated={onChange}
        />
      </div>
      <ProblemNote problem={eventTypes.problem} />
    </section>
  );
}

function CreateTopic({ base, onCreated }: { base: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  return (
    <form
      aria-label="Create a topic"
      noValidate
      onSubmit={async (event) => {
        event.preventDefault();
        setBusy(true);
        setProblem(undefined);
        try {
          await call('POST', `${base}/topics`, { body: { name } });
          setName('');
          onCreated();
        } catch (error) {
          setProblem(toProblem(error));
        } finally {
          setBusy(false);
        }
      }}
    >
      <Field
        id="topic-name"
        label="New topic"
        field="name"
        value={name}
        onChange={setName}
        problem={problem}
      />
      <ProblemNote problem={problem} skip={['name']} />
      <button type="submit" aria-busy={busy || undefined} disabled={busy}>
        Create topic
      </button>
    </form>
  );
}

interface Choice {
  label: string;
  field: string;
  options: [value: string, label: string][];
}

function CreateRoute(props: {
  title: string;
  id: string;
  first: Choice;
  second: Choice;
  create: (first: string, second: string) => Promise<unknown>;
  onCreated: () => void;
}) {
  const [first, setFirst] = useState('');
  const [second, setSecond] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  const select = (choice: Choice, value: string, set: (value: string) => void, suffix: string) => (
    <div className="field">
      <label htmlFor={`${props.id}-${suffix}`}>{choice.label}</label>
      <select id={`${props.id}-${suffix}`} value={value} onChange={(event) => set(event.target.value)}>
        <option value="">Choose…</option>
        {choice.options.map(([optionValue, label]) => (
          <option key={optionValue} value={optionValue}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <form
      aria-label={props.title}
      noValidate
      onSubmit={async (event) => {
        event.preventDefault();
        setBusy(true);
        setProblem(undefined);
        try {
          await props.create(first, second);
          setFirst('');
          setSecond('');
          props.onCreated();
        } catch (error) {
          setProblem(toProblem(error));
        } finally {
          setBusy(false);
        }
      }}
    >
      {select(props.first, first, setFirst, 'first')}
      {select(props.second, second, setSecond, 'second')}
      <ProblemNote problem={problem} />
      <button type="submit" aria-busy={busy || undefined} disabled={busy || !first || !second}>
        {props.title}
      </button>
    </form>
  );
}
