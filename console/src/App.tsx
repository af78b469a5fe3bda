import { useEffect, useState } from 'react';
import {
  call,
  loadConfig,
  storedCredentials,
  setCredentials,
  type Credentials,
  type Problem,
  type Project,
} from './api';
import { Field, ProblemNote, toProblem } from './ui';
import { IntegrationsView } from './views/Integrations';
import { InstallationsView } from './views/Installations';
import { OperationsView, OperationView } from './views/Operations';
import { DestinationsView } from './views/Destinations';
import { ConnectionsView } from './views/Connections';
import { EventsView } from './views/Events';
import { ActivityView } from './views/Activity';

/** `#/{project}/{view}/{...rest}`: every view has an address, so a support link can point at it. */
export interface Route {
  project?: string;
  view: string;
  rest: string[];
}

function parseHash(hash: string): Route {
  const [project, view, ...rest] = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  return { project: project || undefined, view: view || 'installations', rest };
}

export const href = (project: string, view: string, ...rest: string[]) =>
  `#/${[project, view, ...rest].map(encodeURIComponent).join('/')}`;

const views: { id: string; label: string }[] = [
  { id: 'installations', label: 'Installations' },
  { id: 'integrations', label: 'Integrations' },
  { id: 'destinations', label: 'Deliveries' },
  { id: 'connections', label: 'Connections' },
  { id: 'events', label: 'Events' },
  { id: 'activity', label: 'Activity' },
];

export function App() {
  const [ready, setReady] = useState(false);
  const [startProblem, setStartProblem] = useState<Problem>();
  const [signedIn, setSignedIn] = useState(false);
  const [projects, setProjects] = useState<Project[]>([]);
  const [route, setRoute] = useState(() => parseHash(location.hash));

  useEffect(() => {
    const onHash = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  const signIn = async (credentials: Credentials) => {
    const found = await call<Project[]>('GET', '/projects', { as: credentials });
    setCredentials(credentials);
    setProjects(found);
    setSignedIn(true);
    if (!route.project && found[0]) location.hash = href(found[0].name, 'installations');
  };

  useEffect(() => {
    (async () => {
      try {
        await loadConfig();
        const stored = storedCredentials();
        if (stored) await signIn(stored).catch(() => setCredentials(undefined));
      } catch (error) {
        setStartProblem(toProblem(error));
      } finally {
        setReady(true);
      }
    })();
  }, []);

  if (!ready) return <main className="container" aria-busy="true" />;
  if (startProblem)
    return (
      <main className="container">
        <ProblemNote problem={startProblem} />
      </main>
    );
  if (!signedIn) return <SignIn onSignIn={signIn} />;

  const project = projects.find(
    (candidate) => candidate.name === route.project || candidate.id === route.project,
  );
  return (
    <>
      <header className="container-fluid topbar">
        <nav aria-label="Main">
          <ul>
            <li>
              <strong>Ferry console</strong>
            </li>
            <li>
              <label htmlFor="project-switch" className="inline">
                Project{' '}
                <select
                  id="project-switch"
                  value={project?.name ?? ''}
                  onChange={(event) => (location.hash = href(event.target.value, route.view))}
                >
                  {!project && <option value="">Choose a project</option>}
                  {projects.map((candidate) => (
                    <option key={candidate.id} value={candidate.name}>
                      {candidate.name}
                    </option>
                  ))}
                </select>
              </label>
            </li>
          </ul>
          <ul>
            <li>
              <button
                type="button"
                className="secondary outline"
                onClick={() => {
                  setCredentials(undefined);
                  setSignedIn(false);
                }}
              >
                Sign out
              </button>
            </li>
          </ul>
        </nav>
        {project && (
          <nav aria-label="Views" className="tabs">
            <ul>
              {views.map((view) => (
                <li key={view.id}>
                  <a
                    href={href(project.name, view.id)}
                    aria-current={route.view === view.id ? 'page' : undefined}
                  >
                    {view.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        )}
      </header>
      <main className="container">
        {!project ? (
          <p>{projects.length ? 'Choose a project above.' : 'These credentials see no project.'}</p>
        ) : (
          <CurrentView project={project.name} route={route} />
        )}
      </main>
    </>
  );
}

function CurrentView({ project, route }: { project: string; route: Route }) {
  switch (route.view) {
    case 'integrations':
      return <IntegrationsView project={project} selected={route.rest[0]} />;
    case 'installations':
      if (route.rest.length >= 2)
        return (
          <OperationsView project={project} integrationId={route.rest[0]} installationId={route.rest[1]} />
        );
      return <InstallationsView project={project} />;
    case 'operations':
      return <OperationView project={project} operationId={route.rest[0]} />;
    case 'destinations':
      return <DestinationsView project={project} />;
    case 'connections':
      return <ConnectionsView project={project} />;
    case 'events':
      return <EventsView project={project} />;
    case 'activity':
      return <ActivityView project={project} />;
    default:
      return <p>No such view: {route.view}.</p>;
  }
}

function SignIn({ onSignIn }: { onSignIn: (credentials: Credentials) => Promise<void> }) {
  const [kind, setKind] = useState<Credentials['kind']>('apiKey');
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  return (
    <main className="container narrow">
      <h1>Ferry console</h1>
      <form
        aria-label="Sign in"
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setProblem(undefined);
          try {
            await onSignIn({ kind, value: value.trim() });
          } catch (error) {
            const found = toProblem(error);
            // The API's answer is about the credential: show it next to that field.
            setProblem({
              ...found,
              issues: [{ in: 'header', name: 'credential', detail: found.detail ?? '' }],
            });
          } finally {
            setBusy(false);
          }
        }}
      >
        <fieldset>
          <legend>Sign in with</legend>
          <label htmlFor="kind-api-key">
            <input
              type="radio"
              id="kind-api-key"
              name="kind"
              checked={kind === 'apiKey'}
              onChange={() => setKind('apiKey')}
            />
            a project API key
          </label>
          <label htmlFor="kind-bearer">
            <input
              type="radio"
              id="kind-bearer"
              name="kind"
              checked={kind === 'bearer'}
              onChange={() => setKind('bearer')}
            />
            a builder token
          </label>
        </fieldset>
        <Field
          id="credential"
          field="credential"
          label={kind === 'apiKey' ? 'API key' : 'Builder token'}
          type="password"
          value={value}
          onChange={setValue}
          problem={problem}
          required
          hint={
            kind === 'apiKey'
              ? 'Printed by npm start, or by ferry api-keys create.'
              : 'Printed by ferry builders token --email you@example.com.'
          }
        />
        <button type="submit" aria-busy={busy || undefined} disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
