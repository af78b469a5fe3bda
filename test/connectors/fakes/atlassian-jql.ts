import { FakeHttpError } from '../kit/fake-provider.js';

/**
 * The part of JQL the Jira fake understands, as Atlassian's JQL reference describes it: clauses
 * `field operator value` joined by `AND`/`OR` and parentheses, then `ORDER BY field [ASC|DESC], …`.
 * Date values are `yyyy/MM/dd HH:mm`, `yyyy-MM-dd HH:mm`, `yyyy/MM/dd`, `yyyy-MM-dd` (to the minute,
 * read in the user's time zone) or a period before now (`-5d`, `-4w 2d`, `-30m`); anything else,
 * seconds included, is refused as Jira refuses it.
 */

export interface JqlRecord {
  /** A field's value for comparisons: a time in ms, a number, a string, or a list of strings. */
  value(field: string): number | string | string[] | null | undefined;
}

export interface JqlQuery {
  matches(record: JqlRecord): boolean;
  order: { field: string; descending: boolean }[];
  /** The query restricts the search (the enhanced search refuses unbounded queries). */
  bounded: boolean;
}

type Token = { kind: 'word' | 'string' | 'op' | 'paren' | 'comma'; text: string };

const DATE_FIELDS = new Set(['updated', 'created', 'resolutiondate', 'resolved', 'duedate', 'due']);
const FIELDS = new Set([
  ...DATE_FIELDS,
  'project',
  'key',
  'issuekey',
  'id',
  'issuetype',
  'type',
  'status',
  'summary',
  'labels',
  'priority',
  'assignee',
  'reporter',
  'text',
]);

export function jqlError(message: string): FakeHttpError {
  return new FakeHttpError(400, JSON.stringify({ errorMessages: [message], errors: {} }), 'jira');
}

function tokenize(jql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < jql.length) {
    const c = jql[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"' || c === "'") {
      let text = '';
      i++;
      while (i < jql.length && jql[i] !== c) {
        if (jql[i] === '\\' && i + 1 < jql.length) i++;
        text += jql[i++];
      }
      if (jql[i] !== c) throw jqlError(`Error in the JQL Query: Expecting ${c} before the end of the query.`);
      i++;
      tokens.push({ kind: 'string', text });
    } else if (c === '(' || c === ')') {
      tokens.push({ kind: 'paren', text: c });
      i++;
    } else if (c === ',') {
      tokens.push({ kind: 'comma', text: c });
      i++;
    } else if (/[=!<>~]/.test(c)) {
      const op = /^(!=|>=|<=|!~|=|>|<|~)/.exec(jql.slice(i))?.[1];
      if (!op) throw jqlError(`Error in the JQL Query: The character '${c}' is a reserved JQL character.`);
      tokens.push({ kind: 'op', text: op });
      i += op.length;
    } else {
      const word = /^[^\s"'(),=!<>~]+/.exec(jql.slice(i))![0];
      tokens.push({ kind: 'word', text: word });
      i += word.length;
    }
  }
  return tokens;
}

const DATE_FORMATS =
  "Valid formats include: 'yyyy/MM/dd HH:mm', 'yyyy-MM-dd HH:mm', 'yyyy/MM/dd', 'yyyy-MM-dd', or a period format e.g. '-5d', '4w 2d'.";

/** A JQL date value as an instant: wall-clock minutes in a zone `offsetMinutes` east of UTC. */
export function jqlDate(text: string, field: string, now: number, offsetMinutes: number): number {
  const absolute = /^(\d{4})[/-](\d{1,2})[/-](\d{1,2})(?: (\d{1,2}):(\d{2}))?$/.exec(text);
  if (absolute) {
    const [, y, mo, d, h, mi] = absolute;
    return Date.UTC(+y, +mo - 1, +d, +(h ?? 0), +(mi ?? 0)) - offsetMinutes * 60_000;
  }
  const period = /^([-+]?)((?:\s*\d+[wdhm])+)$/.exec(text.trim());
  if (period) {
    const units: Record<string, number> = { w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000 };
    let ms = 0;
    for (const [, n, unit] of period[2].matchAll(/(\d+)([wdhm])/g)) ms += Number(n) * units[unit];
    return period[1] === '-' ? now - ms : now + ms;
  }
  throw jqlError(`Date value '${text}' for field '${field}' is invalid. ${DATE_FORMATS}`);
}

export function parseJql(jql: string, now: number, offsetMinutes: number): JqlQuery {
  const tokens = tokenize(jql);
  let at = 0;
  const peek = () => tokens[at];
  const isWord = (text: string) => peek()?.kind === 'word' && peek().text.toLowerCase() === text;
  let bounded = false;

  const value = (): string => {
    const token = tokens[at++];
    if (!token || (token.kind !== 'word' && token.kind !== 'string'))
      throw jqlError('Error in the JQL Query: Expecting either a value, list or function.');
    return token.text;
  };

  function clause(): (record: JqlRecord) => boolean {
    if (peek()?.kind === 'paren' && peek().text === '(') {
      at++;
      const inner = or();
      if (peek()?.text !== ')') throw jqlError("Error in the JQL Query: Expecting ')'.");
      at++;
      return inner;
    }
    if (isWord('not')) {
      at++;
      const inner = clause();
      return (record) => !inner(record);
    }
    const fieldToken = tokens[at++];
    if (!fieldToken || (fieldToken.kind !== 'word' && fieldToken.kind !== 'string'))
      throw jqlError('Error in the JQL Query: Expecting a field name.');
    const field = fieldToken.text.toLowerCase();
    if (!FIELDS.has(field) && !/^cf\[\d+\]$/.test(field))
      throw jqlError(`Field '${fieldToken.text}' does not exist or you do not have permission to view it.`);
    bounded = true;
    let op: string;
    if (peek()?.kind === 'op') op = tokens[at++].text;
    else if (isWord('in') || isWord('is')) {
      op = tokens[at++].text.toLowerCase();
      if (isWord('not')) {
        at++;
        op += ' not';
      }
    } else if (isWord('not') && tokens[at + 1]?.text.toLowerCase() === 'in') {
      at += 2;
      op = 'not in';
    } else throw jqlError(`Error in the JQL Query: Expecting operator but got '${peek()?.text ?? 'EOF'}'.`);

    if (op === 'in' || op === 'not in') {
      if (peek()?.text !== '(') throw jqlError("Error in the JQL Query: Expecting '('.");
      at++;
      const list: string[] = [];
      while (peek() && peek().text !== ')') {
        list.push(value().toLowerCase());
        if (peek()?.kind === 'comma') at++;
      }
      at++;
      return (record) => {
        const found = record.value(field);
        const values = Array.isArray(found) ? found : [String(found ?? '')];
        const hit = values.some((v) => list.includes(String(v).toLowerCase()));
        return op === 'in' ? hit : !hit;
      };
    }
    if (op === 'is' || op === 'is not') {
      const empty = value().toLowerCase();
      if (empty !== 'empty' && empty !== 'null') throw jqlError("Error in the JQL Query: Expecting 'EMPTY'.");
      return (record) => {
        const found = record.value(field);
        const isEmpty = found === null || found === undefined || (Array.isArray(found) && !found.length);
        return op === 'is' ? isEmpty : !isEmpty;
      };
    }
    const raw = value();
    if (DATE_FIELDS.has(field)) {
      const time = jqlDate(raw, fieldToken.text, now, offsetMinutes);
      return (record) => {
        const found = record.value(field);
        if (typeof found !== 'number') return op === '!=';
        return compare(op, found - time);
      };
    }
    if (op === '~' || op === '!~') {
      const words = raw.toLowerCase();
      return (record) =>
        String(record.value(field) ?? '')
          .toLowerCase()
          .includes(words) ===
        (op === '~');
    }
    return (record) => {
      const found = record.value(field);
      if (Array.isArray(found)) {
        const hit = found.some((v) => v.toLowerCase() === raw.toLowerCase());
        return op === '=' ? hit : op === '!=' ? !hit : false;
      }
      if (typeof found === 'number' && /^-?\d+(\.\d+)?$/.test(raw)) return compare(op, found - Number(raw));
      const text = String(found ?? '').toLowerCase();
      return op === '=' ? text === raw.toLowerCase() : op === '!=' ? text !== raw.toLowerCase() : false;
    };
  }

  function and(): (record: JqlRecord) => boolean {
    const parts = [clause()];
    while (isWord('and')) {
      at++;
      parts.push(clause());
    }
    return (record) => parts.every((part) => part(record));
  }

  function or(): (record: JqlRecord) => boolean {
    const parts = [and()];
    while (isWord('or')) {
      at++;
      parts.push(and());
    }
    return (record) => parts.some((part) => part(record));
  }

  const matches = peek() && !isWord('order') ? or() : () => true;
  const order: JqlQuery['order'] = [];
  if (isWord('order')) {
    at++;
    if (!isWord('by')) throw jqlError("Error in the JQL Query: Expecting 'by'.");
    at++;
    do {
      if (peek()?.kind === 'comma') at++;
      const field = value().toLowerCase();
      if (!FIELDS.has(field)) throw jqlError(`Not able to sort using field '${field}'.`);
      let descending = false;
      if (isWord('asc') || isWord('desc')) descending = tokens[at++].text.toLowerCase() === 'desc';
      order.push({ field, descending });
    } while (peek()?.kind === 'comma');
    if (order.length > 7) throw jqlError('The ORDER BY clause can contain at most 7 fields.');
  }
  if (at < tokens.length) throw jqlError(`Error in the JQL Query: Unexpected '${tokens[at].text}'.`);
  return { matches, order, bounded };
}

function compare(op: string, difference: number): boolean {
  switch (op) {
    case '=':
      return difference === 0;
    case '!=':
      return difference !== 0;
    case '>':
      return difference > 0;
    case '>=':
      return difference >= 0;
    case '<':
      return difference < 0;
    case '<=':
      return difference <= 0;
    default:
      throw jqlError(`The operator '${op}' is not supported by this field.`);
  }
}
