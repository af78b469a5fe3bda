import { useMemo, useRef, useState } from 'react';
import { stringify } from 'yaml';
import { call, projectPath, type Integration, type Problem, type Revision } from '../api';
import { Loading, ProblemNote, fieldIssues, time, toProblem, useLoad } from '../ui';
import { href } from '../App';

/** The manifest (`amp.yaml`) that declares these integrations as they are now. */
function manifestOf(integrations: Integration[]): string {
  if (!integrations.length) return 'specVersion: 1.0.0\nintegrations: []\n';
  return stringify({
    specVersion: integrations[0].latestRevision.specVersion,
    integrations: integrations.map((integration) => integration.latestRevision.content),
  });
}

/** `line 4, column 7: …` or `YAML error at line 4, …` → 4. */
const lineOf = (detail: string) => Number(/\bline (\d+)/.exec(detail)?.[1]) || undefined;
/** The detail without its leading "line N, column M:", which the Line button already says. */
const withoutPosition = (detail: string) => detail.replace(/^line \d+(, column \d+)?: /, '');

export function IntegrationsView({ project, selected }: { project: string; selected?: string }) {
  const list = useLoad(() => call<Integration[]>('GET', `${projectPath(project)}/integrations`), [project]);
  const integration = list.value?.find((item) => item.id === selected || item.name === selected);
  return (
    <>
      <h1>Integrations</h1>
      <Loading loading={list.loading && !list.value} what="integrations" />
      <ProblemNote problem={list.problem} />
      {list.value && (
        <div className="overflow-auto">
          <table className="striped">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Provider</th>
                <th scope="col">Latest revision</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {list.value.map((item) => (
                <tr key={item.id}>
                  <td>
                    <a
                      href={href(project, 'integrations', item.name)}
                      aria-current={item === integration ? 'true' : undefined}
                    >
                      {item.name}
                    </a>
                  </td>
                  <td>{item.provider}</td>
                  <td>
                    <code>{item.latestRevision.id.slice(0, 8)}</code>
                  </td>
                  <td>{time(item.updateTime)}</td>
                </tr>
              ))}
              {list.value.length === 0 && (
                <tr>
                  <td colSpan={4}>No integrations yet: deploy a manifest below.</td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
      )}
      {integration && <Revisions project={project} integration={integration} />}
      {list.value && (
        <Deploy
          key={project}
          project={project}
          initial={manifestOf(list.value)}
          onDeployed={() => void list.reload()}
        />
      )}
    </>
  );
}

function Revisions({ project, integration }: { project: string; integration: Integration }) {
  const revisions = useLoad(
    () =>
      call<Revision[]>(
        'GET',
        `${projectPath(project)}/integrations/${encodeURIComponent(integration.id)}/revisions`,
      ),
    [project, integration.id, integration.latestRevision.id],
  );
  const [shown, setShown] = useState<string>();
  const revision = revisions.value?.find((item) => item.id === shown) ?? revisions.value?.[0];
  return (
    <article aria-labelledby="revisions-title">
      <h2 id="revisions-title">{integration.name}: revisions</h2>
      <ProblemNote problem={revisions.problem} />
      {revisions.value && (
        <>
          <label htmlFor="revision-pick">
            Revision
            <select
              id="revision-pick"
              value={revision?.id}
              onChange={(event) => setShown(event.target.value)}
            >
              {revisions.value.map((item, index) => (
                <option key={item.id} value={item.id}>
                  {time(item.createTime)} ({item.id.slice(0, 8)}){index === 0 ? ', latest' : ''}
                </option>
              ))}
            </select>
          </label>
          {revision && (
            <pre className="yaml" tabIndex={0} aria-label={`Revision ${revision.id} as YAML`}>
              {stringify(revision.content)}
            </pre>
          )}
        </>
      )}
    </article>
  );
}

function Deploy(props: { project: string; initial: string; onDeployed: () => void }) {
  const [source, setSource] = useState(props.initial);
  const [problem, setProblem] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  const [deployed, setDeployed] = useState<string>();
  const editor = useRef<HTMLTextAreaElement>(null);
  const issues = fieldIssues(problem, 'sourceYaml');
  const badLines = useMemo(
    () => new Set(issues.map((issue) => lineOf(issue.detail)).filter(Boolean) as number[]),
    [issues],
  );
  const lines = source.split('\n');

  const goToLine = (line: number) => {
    const area = editor.current;
    if (!area) return;
    const start = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0);
    area.focus();
    area.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
    const lineHeight = area.scrollHeight / Math.max(lines.length, 1);
    area.scrollTop = Math.max(0, (line - 3) * lineHeight);
  };

  return (
    <article aria-labelledby="deploy-title">
      <h2 id="deploy-title">Deploy a manifest</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setProblem(undefined);
          setDeployed(undefined);
          try {
            const deployed = await call<Integration[]>(
              'PUT',
              `${projectPath(props.project)}/integrations:batch`,
              { body: { sourceYaml: source } },
            );
            setDeployed(`Deployed ${deployed.map((item) => item.name).join(', ') || 'nothing'}.`);
            props.onDeployed();
          } catch (error) {
            setProblem(toProblem(error));
          } finally {
            setBusy(false);
          }
        }}
      >
        <label htmlFor="manifest">Manifest (amp.yaml)</label>
        <div className="editor">
          <ol className="gutter" aria-hidden="true">
            {lines.map((_, index) => (
              <li key={index} className={badLines.has(index + 1) ? 'bad-line' : undefined}>
                {index + 1}
              </li>
            ))}
          </ol>
          <textarea
            id="manifest"
            name="sourceYaml"
            ref={editor}
            value={source}
            rows={Math.min(Math.max(lines.length + 1, 8), 30)}
            spellCheck={false}
            aria-invalid={issues.length ? true : undefined}
            aria-describedby={issues.length ? 'manifest-issues' : undefined}
            onChange={(event) => setSource(event.target.value)}
            onScroll={(event) => {
              const gutter = event.currentTarget.previousElementSibling as HTMLElement | null;
              if (gutter) gutter.scrollTop = event.currentTarget.scrollTop;
            }}
          />
        </div>
        {issues.length > 0 && (
          <ul id="manifest-issues" className="field-error issues" aria-label="Problems in the manifest">
            {issues.map((issue, index) => {
              const line = lineOf(issue.detail);
              return (
                <li key={index}>
                  {line ? (
                    <button type="button" className="link" onClick={() => goToLine(line)}>
                      Line {line}
                    </button>
                  ) : null}{' '}
                  {line ? withoutPosition(issue.detail) : issue.detail} <code>{issue.name}</code>
                </li>
              );
            })}
          </ul>
        )}
        <ProblemNote problem={problem} skip={['sourceYaml']} />
        {deployed && <p role="status">{deployed}</p>}
        <button type="submit" aria-busy={busy || undefined} disabled={busy}>
          Deploy
        </button>
      </form>
    </article>
  );
}
