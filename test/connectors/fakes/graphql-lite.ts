/**
 * Just enough GraphQL for a fake provider: a query or mutation document with variables, aliases,
 * arguments (variables, strings, numbers, enums, booleans, lists, objects) and inline fragments,
 * run against plain objects. A field a value does not have is the error a GraphQL server gives.
 */

export type ArgValue =
  { variable: string } | { literal: unknown } | ArgValue[] | { object: Record<string, ArgValue> };

export interface FieldSelection {
  alias?: string;
  name: string;
  args: Record<string, ArgValue>;
  selections?: Selection[];
}
export interface FragmentSelection {
  on: string;
  selections: Selection[];
}
export type Selection = FieldSelection | FragmentSelection;

export interface GraphqlDocument {
  operation: 'query' | 'mutation';
  selections: Selection[];
}

export class GraphqlSyntaxError extends Error {}

const tokenPattern =
  /\s+|,|#[^\n]*|(\.\.\.)|("(?:[^"\\]|\\.)*")|(-?\d+(?:\.\d+)?)|([_A-Za-z][_0-9A-Za-z]*)|([{}():!$[\]=@])/y;

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  tokenPattern.lastIndex = 0;
  while (tokenPattern.lastIndex < text.length) {
    const at = tokenPattern.lastIndex;
    const match = tokenPattern.exec(text);
    if (!match || match.index !== at)
      throw new GraphqlSyntaxError(`Parse error on "${text.slice(at, at + 10)}"`);
    const token = match[1] ?? match[2] ?? match[3] ?? match[4] ?? match[5];
    if (token !== undefined) tokens.push(token);
  }
  return tokens;
}

export function parseGraphql(text: string): GraphqlDocument {
  const tokens = tokenize(text);
  let at = 0;
  const peek = () => tokens[at];
  const take = (expected?: string) => {
    const token = tokens[at++];
    if (token === undefined || (expected !== undefined && token !== expected))
      throw new GraphqlSyntaxError(
        `Parse error: expected ${expected ?? 'a token'}, got ${token ?? 'the end'}`,
      );
    return token;
  };
  const value = (): ArgValue => {
    const token = take();
    if (token === '$') return { variable: take() };
    if (token.startsWith('"')) return { literal: JSON.parse(token) };
    if (/^-?\d/.test(token)) return { literal: Number(token) };
    if (token === '[') {
      const list: ArgValue[] = [];
      while (peek() !== ']') list.push(value());
      take(']');
      return list;
    }
    if (token === '{') {
      const object: Record<string, ArgValue> = {};
      while (peek() !== '}') {
        const name = take();
        take(':');
        object[name] = value();
      }
      take('}');
      return { object };
    }
    if (token === 'true' || token === 'false') return { literal: token === 'true' };
    if (token === 'null') return { literal: null };
    return { literal: token };
  };
  const selectionSet = (): Selection[] => {
    take('{');
    const selections: Selection[] = [];
    while (peek() !== '}') {
      if (peek() === '...') {
        take('...');
        take('on');
        const on = take();
        selections.push({ on, selections: selectionSet() });
        continue;
      }
      let name = take();
      let alias: string | undefined;
      if (peek() === ':') {
        take(':');
        alias = name;
        name = take();
      }
      const args: Record<string, ArgValue> = {};
      if (peek() === '(') {
        take('(');
        while (peek() !== ')') {
          const arg = take();
          take(':');
          args[arg] = value();
        }
        take(')');
      }
      selections.push({ alias, name, args, ...(peek() === '{' && { selections: selectionSet() }) });
    }
    take('}');
    return selections;
  };
  let operation: 'query' | 'mutation' = 'query';
  if (peek() === 'query' || peek() === 'mutation') {
    operation = take() as 'query' | 'mutation';
    if (peek() !== '(' && peek() !== '{') take();
    if (peek() === '(') {
      // Variable definitions: their types are not checked here.
      let depth = 0;
      do {
        const token = take();
        if (token === '(') depth++;
        if (token === ')') depth--;
      } while (depth > 0);
    }
  }
  const selections = selectionSet();
  if (at !== tokens.length) throw new GraphqlSyntaxError('Parse error: text after the operation');
  return { operation, selections };
}

export function argumentValues(
  args: Record<string, ArgValue>,
  variables: Record<string, unknown>,
): Record<string, unknown> {
  const resolve = (value: ArgValue): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if ('variable' in value) return variables[value.variable];
    if ('object' in value)
      return Object.fromEntries(Object.entries(value.object).map(([name, inner]) => [name, resolve(inner)]));
    return value.literal;
  };
  return Object.fromEntries(Object.entries(args).map(([name, value]) => [name, resolve(value)]));
}

/** A field resolver: called with the field's arguments. */
export type Resolver = (args: Record<string, unknown>) => unknown;

/** Thrown by a resolver or the projection: becomes an entry of the answer's `errors`. */
export class GraphqlFieldError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** How a server words what the projection refuses (graphql-ruby's wording by default). */
export interface ProjectOptions {
  /** A selected field the type does not have. */
  unknownField?(field: string, typename: string): GraphqlFieldError;
}

/**
 * The value projected onto the selections: members named by alias or name, functions called with
 * their arguments, inline fragments kept when `__typename` matches.
 */
export function project(
  value: unknown,
  selections: Selection[] | undefined,
  variables: Record<string, unknown>,
  options: ProjectOptions = {},
): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => project(item, selections, variables, options));
  if (!selections) return value;
  const object = value as Record<string, unknown>;
  const typename = typeof object.__typename === 'string' ? object.__typename : 'Object';
  const result: Record<string, unknown> = {};
  for (const selection of selections) {
    if ('on' in selection) {
      if (selection.on === typename)
        Object.assign(result, project(value, selection.selections, variables, options));
      continue;
    }
    if (!Object.hasOwn(object, selection.name)) {
      throw (
        options.unknownField?.(selection.name, typename) ??
        new GraphqlFieldError(
          `Field '${selection.name}' doesn't exist on type '${typename}'`,
          'undefinedField',
        )
      );
    }
    const member = object[selection.name];
    const resolved =
      typeof member === 'function' ? (member as Resolver)(argumentValues(selection.args, variables)) : member;
    if (selection.selections && resolved !== null && typeof resolved !== 'object') {
      throw new GraphqlFieldError(
        `Selections can't be made on scalars (field '${selection.name}')`,
        'selectionMismatch',
      );
    }
    if (
      !selection.selections &&
      resolved !== null &&
      typeof resolved === 'object' &&
      !Array.isArray(resolved)
    ) {
      throw new GraphqlFieldError(
        `Field must have selections (field '${selection.name}' returns an object)`,
        'selectionMismatch',
      );
    }
    result[selection.alias ?? selection.name] = project(resolved, selection.selections, variables, options);
  }
  return result;
}

/** The fields a document selects, found through inline fragments too, with their arguments resolved. */
function fieldsOf(selections: Selection[]): FieldSelection[] {
  return selections.flatMap((selection) =>
    'on' in selection ? fieldsOf(selection.selections) : [selection],
  );
}

/**
 * A query's cost the way cost-based GraphQL APIs count it, from the document alone: each scalar
 * field `scalar` points, each object `object` points, and a connection (a field taking `first` or
 * `last`, or selecting `nodes`/`edges`) costs `connection` points (default `object`) plus its page
 * size (or `defaultPage`) times what each node selects; its `pageInfo` counts once.
 */
export function queryCost(
  selections: Selection[],
  variables: Record<string, unknown>,
  rules: {
    scalar: number;
    object: number;
    defaultPage: number;
    connection?: number;
    pageArguments?: string[];
  },
): number {
  const pageArguments = rules.pageArguments ?? ['first', 'last'];
  const cost = (list: Selection[]): number =>
    fieldsOf(list).reduce((sum, field) => {
      if (!field.selections) return sum + rules.scalar;
      const args = argumentValues(field.args, variables);
      const children = fieldsOf(field.selections);
      const paged =
        pageArguments.some((name) => name in args) ||
        children.some((f) => f.name === 'nodes' || f.name === 'edges');
      if (!paged) return sum + rules.object + cost(field.selections);
      const size = pageArguments.map((name) => args[name]).find((v) => typeof v === 'number');
      const perPage = children.filter((f) => f.name === 'pageInfo');
      const perNode = children.filter((f) => f.name !== 'pageInfo');
      return (
        sum +
        (rules.connection ?? rules.object) +
        ((size as number | undefined) ?? rules.defaultPage) * cost(perNode) +
        cost(perPage)
      );
    }, 0);
  return cost(selections);
}
