import { compile, isRegistered, TreeInterpreter, type JSONValue } from '@jmespath-community/jmespath';

/**
 * JMESPath templates over a message (S3's `keyTemplate`, Kinesis's `partitionKeyTemplate`): the
 * public service names these fields JMESPath expressions, so a destination moved from it keeps its
 * settings. The expression sees the message's JSON with `messageId` added, so a template can stay
 * unique per message (and a redelivery lands on the same key).
 */

type Compiled = ReturnType<typeof compile>;

const compiled = new Map<string, Compiled>();
const CACHE_LIMIT = 500;

/** A template that cannot be used; the message says why and never quotes a message. */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

function compileCached(expression: string): Compiled {
  let ast = compiled.get(expression);
  if (!ast) {
    ast = compile(expression);
    if (compiled.size >= CACHE_LIMIT) compiled.clear();
    compiled.set(expression, ast);
  }
  return ast;
}

/** Function names the expression calls (unknown ones only fail at search time otherwise). */
function calledFunctions(node: unknown, names: Set<string> = new Set()): Set<string> {
  if (Array.isArray(node)) {
    for (const child of node) calledFunctions(child, names);
  } else if (node && typeof node === 'object') {
    const { type, name } = node as { type?: unknown; name?: unknown };
    if (type === 'Function' && typeof name === 'string') names.add(name);
    for (const value of Object.values(node)) calledFunctions(value, names);
  }
  return names;
}

/** Why `expression` is not a usable template, or undefined when it is. */
export function templateProblem(expression: string): string | undefined {
  let ast: Compiled;
  try {
    ast = compileCached(expression);
  } catch (error) {
    return `not a JMESPath expression: ${(error as Error).message}`;
  }
  const unknown = [...calledFunctions(ast)].filter((name) => !isRegistered(name));
  if (unknown.length) return `calls unknown JMESPath function ${unknown.map((n) => `${n}()`).join(', ')}`;
  return undefined;
}

/**
 * The template's value over the message: a string, or a number or boolean as text. Anything else
 * (null, an object, an empty string) is a TemplateError: the message cannot be placed.
 */
export function evaluateTemplate(expression: string, message: unknown, messageId: string): string {
  const input: JSONValue =
    message && typeof message === 'object' && !Array.isArray(message)
      ? { ...(message as Record<string, JSONValue>), messageId }
      : { message: message as JSONValue, messageId };
  let value: JSONValue;
  try {
    value = TreeInterpreter.search(compileCached(expression), input);
  } catch (error) {
    throw new TemplateError(`the template failed: ${(error as Error).message}`);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value !== 'string' || value === '') {
    const kind =
      value === ''
        ? 'an empty string'
        : value === null
          ? 'null'
          : Array.isArray(value)
            ? 'a list'
            : 'an object';
    throw new TemplateError(`the template gave ${kind}, not text`);
  }
  return value;
}
