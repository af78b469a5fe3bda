import { useState } from 'react';
import { call, type Destination, type Problem } from '../api';
import { fieldIssues, Field, ProblemNote, toProblem } from '../ui';

/** A labelled JSON textarea with the API's issues for its field (and the fields under it) shown. */
export function JsonField(props: {
  id: string;
  label: string;
  field: string;
  value: string;
  onChange: (value: string) => void;
  problem?: Problem;
  hint?: string;
}) {
  const issues = fieldIssues(props.problem, props.field);
  const note = `${props.id}-note`;
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <textarea
        id={props.id}
        rows={6}
        spellCheck={false}
        value={props.value}
        aria-invalid={issues.length ? true : undefined}
        aria-describedby={issues.length || props.hint ? note : undefined}
        onChange={(event) => props.onChange(event.target.value)}
      />
      {(issues.length > 0 || props.hint) && (
        <small id={note} className={issues.length ? 'field-error' : undefined}>
          {issues.length ? issues.map((issue) => `${issue.name}: ${issue.detail}`).join('; ') : props.hint}
        </small>
      )}
    </div>
  );
}

const badJson = (field: string, detail: string): Problem => ({
  status: 400,
  title: 'Bad JSON',
  detail,
  issues: [{ in: 'body', name: field, detail }],
});

function jsonObject(field: string, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badJson(field, 'not JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw badJson(field, 'must be a JSON object');
  return value as Record<string, unknown>;
}

/** The `metadata.<field>` paths of an update mask: each field added, changed or removed. */
export function metadataChanges(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names]
    .filter((name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]))
    .map((name) => `metadata.${name}`);
}

/**
 * A destination's settings as the builder set them, editable: its name and metadata (a webhook's URL
 * as a field, other types' as JSON), and secrets, which are write-only (left empty, they are kept).
 * Sent as one PATCH whose update mask names exactly what changed.
 */
export function DestinationSettings(props: { path: string; destination: Destination; onSaved: () => void }) {
  const { destination } = props;
  const webhook = destination.type === 'webhook';
  const shownMetadata = { ...destination.metadata };
  const [name, setName] = useState(destination.name);
  const [url, setUrl] = useState(destination.metadata.url ?? '');
  const [metadata, setMetadata] = useState(JSON.stringify(shownMetadata, null, 2));
  const [secrets, setSecrets] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const id = `settings-${destination.id}`;
  return (
    <details>
      <summary>Settings</summary>
      <form
        aria-label={`Settings of ${destination.name}`}
        noValidate
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setProblem(undefined);
          setSaved(false);
          try {
            const nextMetadata = webhook ? { ...shownMetadata, url } : jsonObject('metadata', metadata);
            const nextSecrets = secrets.trim() ? jsonObject('secrets', secrets) : undefined;
            const updateMask = [
              ...(name !== destination.name ? ['name'] : []),
              ...metadataChanges(shownMetadata, nextMetadata),
              ...Object.keys(nextSecrets ?? {}).map((field) => `secrets.${field}`),
            ];
            if (!updateMask.length) {
              setSaved(true);
              return;
            }
            await call('PATCH', props.path, {
              body: {
                updateMask,
                destination: { name, metadata: nextMetadata, ...(nextSecrets && { secrets: nextSecrets }) },
              },
            });
            setSecrets('');
            setSaved(true);
            props.onSaved();
          } catch (error) {
            setProblem(error instanceof Error ? toProblem(error) : (error as Problem));
          } finally {
            setBusy(false);
          }
        }}
      >
        <Field
          id={`${id}-name`}
          label="Name"
          field="destination.name"
          value={name}
          onChange={setName}
          problem={problem}
        />
        {webhook ? (
          <Field
            id={`${id}-url`}
            label="Webhook URL"
            field="destination.metadata.url"
            type="url"
            value={url}
            onChange={setUrl}
            problem={problem}
          />
        ) : (
          <JsonField
            id={`${id}-metadata`}
            label="Metadata"
            field="metadata"
            value={metadata}
            onChange={setMetadata}
            problem={problem}
          />
        )}
        <JsonField
          id={`${id}-secrets`}
          label="New secrets"
          field="secrets"
          value={secrets}
          onChange={setSecrets}
          problem={problem}
          hint="Write-only: leave empty to keep the current ones."
        />
        <ProblemNote
          problem={problem}
          skip={['destination.name', 'destination.metadata.url', 'metadata', 'secrets']}
        />
        <button type="submit" aria-busy={busy || undefined} disabled={busy}>
          Save {destination.name}
        </button>
        {saved && <small role="status"> Saved.</small>}
      </form>
    </details>
  );
}
