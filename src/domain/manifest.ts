import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { ProblemError, type ProblemIssue } from '../core/problem.js';
import { decoded, schemaIssues } from '../core/validation.js';
import { IntegrationContentSchema, ManifestSchema, type Manifest } from '../schemas/integration-content.js';
import {
  distinctSchedulesIssue,
  integrationContentIssues,
  type ContentRules,
} from './integration-content.js';
import { manifestWarnings } from './manifest-warnings.js';

/** `integrations[0].read.objects[1].schedule` → `['integrations', 0, 'read', 'objects', 1, 'schedule']`. */
function nameToPath(name: string): (string | number)[] {
  return [...name.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((match) =>
    match[2] !== undefined ? Number(match[2]) : match[1],
  );
}

/** The deepest YAML node that exists along `path`, so a missing key points at its parent. */
function nodeAt(document: Document, path: (string | number)[]): Node | undefined {
  for (let length = path.length; length >= 0; length--) {
    const node = document.getIn(path.slice(0, length), true);
    if (node && (isMap(node) || isSeq(node) || typeof node === 'object')) return node as Node;
  }
  return undefined;
}

/**
 * Where an issue starts in the text: an unknown property at its key (where the author typed it),
 * anything else at its value, or the nearest thing around it that exists (a missing key's map).
 */
function positionOf(document: Document, issue: ProblemIssue): number | undefined {
  const path = nameToPath(issue.name);
  if (issue.detail.includes(' is not an allowed property')) {
    const parent = document.getIn(path.slice(0, -1), true);
    if (isMap(parent)) {
      const pair = parent.items.find(
        (item) => (isScalar(item.key) ? item.key.value : item.key) === path.at(-1),
      );
      if (pair && isScalar(pair.key)) return pair.key.range?.[0];
    }
  }
  return nodeAt(document, path)?.range?.[0];
}

/**
 * Issues with the line and column each starts at (`line 11, column 15: …`), named under the field
 * that held the YAML, in the order of the text, as an editor lists them.
 */
function placed(
  document: Document,
  lineCounter: LineCounter,
  issues: ProblemIssue[],
  field: string,
): ProblemIssue[] {
  return issues
    .map((issue) => ({ issue, offset: positionOf(document, issue) ?? 0 }))
    .sort((a, b) => a.offset - b.offset)
    .map(({ issue, offset }) => {
      const { line, col } = lineCounter.linePos(offset);
      return {
        ...issue,
        name: `${field}:${issue.name}`,
        detail: `line ${line}, column ${col}: ${issue.detail}`,
      };
    });
}

/** A 400 for issues found beyond the text (a destination the project lacks), placed like the rest. */
export function manifestProblem(
  sourceYaml: string,
  issues: ProblemIssue[],
  field = 'sourceYaml',
): ProblemError {
  const lineCounter = new LineCounter();
  const document = parseDocument(sourceYaml, { lineCounter, prettyErrors: false, uniqueKeys: true });
  return ProblemError.invalid(
    placed(document, lineCounter, issues, field),
    'The manifest does not describe valid integrations.',
  );
}

/**
 * A valid manifest with what it names that the providers' deep connectors do not know (unknown
 * objects, fields), placed like errors; a manifest with errors throws as `parseManifest` does.
 */
export function checkManifest(
  sourceYaml: string,
  rules: ContentRules,
  field = 'sourceYaml',
): { manifest: Manifest; warnings: ProblemIssue[] } {
  const manifest = parseManifest(sourceYaml, rules, field);
  const lineCounter = new LineCounter();
  const document = parseDocument(sourceYaml, { lineCounter, prettyErrors: false, uniqueKeys: true });
  return { manifest, warnings: placed(document, lineCounter, manifestWarnings(manifest), field) };
}

/**
 * Parses an `amp.yaml` manifest and validates it whole. Every issue names its path and the line
 * and column it starts at, so a builder can jump to it.
 */
export function parseManifest(sourceYaml: string, rules: ContentRules, field = 'sourceYaml'): Manifest {
  const lineCounter = new LineCounter();
  const document = parseDocument(sourceYaml, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number | undefined) => {
    const position = lineCounter.linePos(offset ?? 0);
    return { line: position.line, column: position.col };
  };
  if (document.errors.length) {
    throw ProblemError.invalid(
      document.errors.map((error) => {
        const { line, column } = at(error.pos[0]);
        return {
          in: 'body',
          name: field,
          detail: `YAML error at line ${line}, column ${column}: ${error.message.split('\n')[0]}`,
        };
      }),
      'The manifest is not valid YAML.',
    );
  }
  let value: unknown;
  try {
    // Aliases are expanded here; a document that expands to millions of nodes is refused.
    value = document.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (error) {
    throw ProblemError.invalid(
      [{ in: 'body', name: field, detail: `${field} could not be expanded: ${(error as Error).message}` }],
      'The manifest is not valid YAML.',
    );
  }
  const issues = schemaIssues(ManifestSchema, value, 'body');
  // Names in NFC from here on, so two spellings of one name are one integration (declared twice).
  if (!issues.length) value = decoded<Manifest>(ManifestSchema, value);
  const tooMany = issues.length ? undefined : distinctSchedulesIssue((value as Manifest).integrations, field);
  if (tooMany) issues.push(tooMany);
  // Every mistake in one pass: an integration whose shape is right is checked further (schedules,
  // fields, destinations) even when another integration of the manifest is malformed.
  const integrations = (value as { integrations?: unknown } | null)?.integrations;
  if (Array.isArray(integrations)) {
    integrations.forEach((item, index) => {
      const prefix = `integrations[${index}]`;
      if (issues.some((issue) => issue.name === prefix || issue.name.startsWith(`${prefix}.`))) return;
      if (schemaIssues(IntegrationContentSchema, item, 'body').length) return;
      issues.push(...integrationContentIssues(decoded(IntegrationContentSchema, item), prefix, rules));
    });
    const seen = new Set<string>();
    integrations.forEach((item, index) => {
      const name = (item as { name?: unknown } | null)?.name;
      if (typeof name !== 'string') return;
      if (seen.has(name)) {
        issues.push({
          in: 'body',
          name: `integrations[${index}].name`,
          value: name,
          detail: `integration "${name}" is declared twice`,
        });
      }
      seen.add(name);
    });
  }
  if (issues.length) {
    throw ProblemError.invalid(
      placed(document, lineCounter, issues, field),
      'The manifest does not describe valid integrations.',
    );
  }
  return value as Manifest;
}
