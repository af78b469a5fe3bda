import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { ApiError, type Problem } from './api';

/** Loads on mount and when `deps` change; `reload` runs it again; `every` polls (ms) while asked. */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
  every?: (value: T | undefined) => number | undefined,
) {
  const [value, setValue] = useState<T>();
  const [problem, setProblem] = useState<Problem>();
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(async () => {
    setLoading(true);
    try {
      const next = await loadRef.current();
      setValue(next);
      setProblem(undefined);
      return next;
    } catch (error) {
      setProblem(toProblem(error));
      return undefined;
    } finally {
      setLoading(false);
    }
  }, deps);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      const next = await reload();
      const delay = every?.(next);
      if (!stopped && delay) timer = setTimeout(run, delay);
    };
    void run();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [reload]);
  return { value, problem, loading, reload, setValue };
}

export function toProblem(error: unknown): Problem {
  if (error instanceof ApiError) return error.problem;
  return { status: 0, title: 'Error', detail: (error as Error)?.message ?? String(error) };
}

/** A problem detail as the API sent it: title, detail, remedy and the issues no field shows. */
export function ProblemNote({ problem, skip = [] }: { problem?: Problem; skip?: string[] }) {
  if (!problem) return null;
  const issues = (problem.issues ?? []).filter((issue) => !skip.some((field) => matches(issue.name, field)));
  return (
    <div role="alert" className="problem">
      <strong>
        {problem.status ? `${problem.status} ` : ''}
        {problem.title ?? 'Error'}
      </strong>
      {problem.detail && <p>{problem.detail}</p>}
      {issues.length > 0 && (
        <ul>
          {issues.map((issue, index) => (
            <li key={index}>
              <code>{issue.name}</code>: {issue.detail}
            </li>
          ))}
        </ul>
      )}
      {problem.remedy && <p>{problem.remedy}</p>}
    </div>
  );
}

const matches = (name: string, field: string) =>
  name === field ||
  name.startsWith(`${field}.`) ||
  name.startsWith(`${field}:`) ||
  name.startsWith(`${field}[`);

/** The issues of a problem that concern one field (`metadata.url`, `sourceYaml:integrations[0]…`). */
export function fieldIssues(problem: Problem | undefined, field: string) {
  return (problem?.issues ?? []).filter((issue) => matches(issue.name, field));
}

/** A labelled input with the API's issues for its field shown under it. */
export function Field(props: {
  id: string;
  label: string;
  field: string;
  problem?: Problem;
  value: string;
  onChange: (value: string) => void;
  type?: string;
  placeholder?: string;
  required?: boolean;
  autoComplete?: string;
  hint?: string;
}) {
  const issues = fieldIssues(props.problem, props.field);
  const describedBy = `${props.id}-note`;
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <input
        id={props.id}
        name={props.field}
        type={props.type ?? 'text'}
        value={props.value}
        placeholder={props.placeholder}
        required={props.required}
        autoComplete={props.autoComplete ?? 'off'}
        aria-invalid={issues.length ? true : undefined}
        aria-describedby={issues.length || props.hint ? describedBy : undefined}
        onChange={(event) => props.onChange(event.target.value)}
      />
      {(issues.length > 0 || props.hint) && (
        <small id={describedBy} className={issues.length ? 'field-error' : undefined}>
          {issues.length ? issues.map((issue) => issue.detail).join('; ') : props.hint}
        </small>
      )}
    </div>
  );
}

export function Badge({ tone, children }: { tone: 'good' | 'bad' | 'busy' | 'muted'; children: ReactNode }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}

export function StatusBadge({ status }: { status?: string }) {
  if (!status) return <Badge tone="muted">none yet</Badge>;
  const tone =
    status === 'success' || status === 'healthy' || status === 'working'
      ? 'good'
      : status === 'in_progress'
        ? 'busy'
        : 'bad';
  return <Badge tone={tone}>{status.replace('_', ' ')}</Badge>;
}

export function time(iso?: string): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function Loading({ loading, what }: { loading: boolean; what: string }) {
  return loading ? <p aria-busy="true">Loading {what}…</p> : null;
}

/**
 * An action button that shows its own busy state and the problem the API answered. With `confirm`,
 * the first press only asks (the button then reads `confirm`), and the second one acts: nothing is
 * deleted by a stray click, and no browser dialog interrupts keyboard users.
 */
export function ActionButton(props: {
  label: string;
  run: () => Promise<unknown>;
  onDone?: (result: unknown) => void;
  className?: string;
  ariaLabel?: string;
  /** A toggle's state (aria-pressed), when known. */
  pressed?: boolean;
  /** What the button asks before it acts ("Delete crm-sync for good?"). */
  confirm?: string;
}) {
  const [busy, setBusy] = useState(false);
  const [asking, setAsking] = useState(false);
  const [problem, setProblem] = useState<Problem>();
  return (
    <span className="action">
      <button
        type="button"
        className={props.className}
        aria-label={asking ? props.confirm : props.ariaLabel}
        aria-busy={busy || undefined}
        aria-pressed={props.pressed}
        disabled={busy}
        onBlur={() => setAsking(false)}
        onClick={async () => {
          if (props.confirm && !asking) {
            setAsking(true);
            return;
          }
          setAsking(false);
          setBusy(true);
          setProblem(undefined);
          try {
            const result = await props.run();
            props.onDone?.(result);
          } catch (error) {
            setProblem(toProblem(error));
          } finally {
            setBusy(false);
          }
        }}
      >
        {asking ? props.confirm : props.label}
      </button>
      {problem && (
        <small role="alert" className="field-error">
          {problem.detail ?? problem.title}
          {problem.issues?.length ? `: ${problem.issues.map((issue) => issue.detail).join('; ')}` : ''}
        </small>
      )}
    </span>
  );
}
