import { useMemo, useRef, useState } from 'react';
import { stringify } from 'yaml';
import {
  call,
  projectPath,
  type DeployedManifest,
  type Integration,
  type Problem,
  type ProblemIssue,
  type Revision,
} from '../api';
import { Loading, ProblemNote, fieldIssues, time, toProblem, useLoad } from '../ui';
import { href } from '../App';
// One diff for the CLI's `ferry deploy` and this view (a pure function from the core floor).
import { lineDiff } from '../../../src/core/line-diff';

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
  // The file as the builder last deployed it (comments, order); 404 until something was deployed.
  const deployed = useLoad(
    () =>
      call<DeployedManifest>('GET', `${projectPath(project)}/manifests/latest`).catch((error: unknown) => {
        if (toProblem(error).status === 404) return null;
        throw error;
      }),
    [project],
  );
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
      {list.value && (deployed.value !== undefined || deployed.problem) && (
        <>
          {deployed.value && !deployed.value.matchesLive && (
            <p role="note">
              The manifest deployed {time(deployed.value.createTime)} no longer describes these integrations
              (one was changed or created another way), so the editor shows them as generated YAML.
            </p>
          )}
          <Deploy
            key={project}
            project={project}
            initial={deployed.value?.matchesLive ? deployed.value.sourceYaml : manifestOf(list.value)}
            onDeployed={() => {
              void list.reload();
              void deployed.reload();
            }}
          />
        </>
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
  const [against, setAgainst] = useState('');
  const revision = revisions.value?.find((item) => item.id === shown) ?? revisions.value?.[0];
  const older = revisions.value?.find((item) => item.id === against);
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
          <label htmlFor="revision-against">
            Compare with
            <select
              id="revision-against"
              value={against}
              onChange={(event) => setAgainst(event.target.value)}
            >
              <option value="">nothing (show the revision)</option>
              {revisions.value
                .filter((item) => item.id !== revision?.id)
                .map((item) => (
                  <option key={item.id} value={item.id}>
                    {time(item.createTime)} ({item.id.slice(0, 8)})
                  </option>
                ))}
            </select>
          </label>
          {revision && older && (
            <pre
              className="yaml diff"
              tabIndex={0}
              aria-label={`Changes from revision ${older.id} to ${revision.id}`}
            >
              {lineDiff(stringify(older.content), stringify(revision.content)).map((line, index) => (
                <span
                  key={index}
                  className={line.startsWith('+') ? 'added' : line.startsWith('-') ? 'removed' : undefined}
                >
                  {line}
                  {'\n'}
                </span>
              ))}
            </pre>
          )}
          {revision && !older && (
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
  const [warnings, setWarnings] = useState<ProblemIssue[]>([]);
  const editor = useRef<HTMLTextAreaElement>(null);
  const issues = fieldIssues(problem, 'sourceYaml');
  const badLines = useMemo(
    () => new Set(issues.map((issue) => lineOf(issue.detail)).filter(Boolean) as number[]),
    [issues],
  );
  const warnLines = useMemo(
    () => new Set(warnings.map((issue) => lineOf(issue.detail)).filter(Boolean) as number[]),
    [warnings],
  );
  const base = projectPath(props.project);
  /** Every error in one pass (400), or the warnings of a valid manifest: nothing is deployed. */
  const check = async () => {
    const checked = await call<{ warnings: ProblemIssue[] }>('POST', `${base}/integrations:check`, {
      body: { sourceYaml: source },
    });
    setWarnings(checked.warnings);
    return checked.warnings;
  };
  const run = async (deploy: boolean) => {
    setBusy(true);
    setProblem(undefined);
    setDeployed(undefined);
    setWarnings([]);
    try {
      const found = await check();
      if (!deploy) {
        setDeployed(found.length ? undefined : 'No problems found.');
        return;
      }
      const result = await call<Integration[]>('PUT', `${base}/integrations:batch`, {
        body: { sourceYaml: source },
      });
      setDeployed(`Deployed ${result.map((item) => item.name).join(', ') || 'nothing'}.`);
      props.onDeployed();
    } catch (error) {
      setProblem(toProblem(error));
    } finally {
      setBusy(false);
    }
  };
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
        onSubmit={(event) => {
          event.preventDefault();
          void run(true);
        }}
      >
        <label htmlFor="manifest">Manifest (amp.yaml)</label>
        <div className="editor">
          <ol className="gutter" aria-hidden="true">
            {lines.map((_, index) => (
              <li
                key={index}
                className={
                  badLines.has(index + 1) ? 'bad-line' : warnLines.has(index + 1) ? 'warn-line' : undefined
                }
              >
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
        <IssueList
          id="manifest-issues"
          label="Problems in the manifest"
          className="field-error issues"
          issues={issues}
          goToLine={goToLine}
        />
        <IssueList
          id="manifest-warnings"
          label="Warnings: names the provider's connector does not know"
          className="warnings issues"
          issues={warnings}
          goToLine={goToLine}
        />
        <ProblemNote problem={problem} skip={['sourceYaml']} />
        {deployed && <p role="status">{deployed}</p>}
        <div className="actions">
          <button type="submit" aria-busy={busy || undefined} disabled={busy}>
            Deploy
          </button>
          <button type="button" className="secondary" disabled={busy} onClick={() => void run(false)}>
            Check
          </button>
        </div>
      </form>
    </article>
  );
}

/** Issues of the manifest, each with a button that selects its line in the editor. */
function IssueList(props: {
  id: string;
  label: string;
  className: string;
  issues: ProblemIssue[];
  goToLine: (line: number) => void;
}) {
  if (!props.issues.length) return null;
  return (
    <ul id={props.id} className={props.className} aria-label={props.label}>
      {props.issues.map((issue, index) => {
        const line = lineOf(issue.detail);
        return (
          <li key={index}>
            {line ? (
              <button type="button" className="link" onClick={() => props.goToLine(line)}>
                Line {line}
              </button>
            ) : null}{' '}
            {line ? withoutPosition(issue.detail) : issue.detail} <code>{issue.name}</code>
          </li>
        );
      })}
    </ul>
  );
}
