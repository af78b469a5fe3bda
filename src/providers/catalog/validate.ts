import { Compile } from 'typebox/compile';
import { ProviderFileSchema, requiredAuthOpts, type ProviderFile } from '../../schemas/provider.js';
import { ambiguousCredentialKinds } from './auth-methods.js';

type AuthOptsField = 'oauth2Opts' | 'apiKeyOpts' | 'basicOpts' | 'customOpts' | 'jwtOpts';

const checker = Compile(ProviderFileSchema);

export class ProviderCatalogError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderCatalogError';
  }
}

function where(pointer: string): string {
  return pointer === '' ? '(root)' : pointer;
}

/** The options an auth method (the main one at `at` = '', or an alternative) must carry. */
function authOptsProblems(method: Pick<ProviderFile, AuthOptsField | 'authType'>, at: string): string[] {
  const problems: string[] = [];
  const required = (requiredAuthOpts as Record<string, AuthOptsField | undefined>)[method.authType];
  if (required && !method[required])
    problems.push(`${at}/${required} is required when authType is ${method.authType}`);
  const oauth2 = method.oauth2Opts;
  if (oauth2 && oauth2.grantType.startsWith('authorizationCode') && !oauth2.authURL) {
    problems.push(`${at}/oauth2Opts/authURL is required for grantType ${oauth2.grantType}`);
  }
  const apiKey = method.apiKeyOpts;
  if (apiKey && !apiKey[apiKey.attachmentType]) {
    problems.push(
      `${at}/apiKeyOpts/${apiKey.attachmentType} is required when attachmentType is ${apiKey.attachmentType}`,
    );
  }
  return problems;
}

/**
 * Rules the JSON Schema states with if/then, restated so a broken file gets a message naming the
 * missing property rather than "must match then schema".
 */
function ruleProblems(provider: ProviderFile, expectedName: string): string[] {
  const problems: string[] = [];
  if (provider.name !== expectedName)
    problems.push(`/name is "${provider.name}" but the file is named "${expectedName}"`);
  problems.push(...authOptsProblems(provider, ''));
  provider.alternativeAuth?.forEach((alternative, index) => {
    problems.push(...authOptsProblems(alternative, `/alternativeAuth/${index}`));
  });
  for (const kind of ambiguousCredentialKinds(provider)) {
    problems.push(
      `/alternativeAuth: more than one of the provider's auth methods takes ${kind} credentials, so a connection could not tell which it uses`,
    );
  }
  if (provider.modules) {
    for (const [key, module] of Object.entries(provider.modules)) {
      if (module.id !== key) problems.push(`/modules/${key}/id is "${module.id}", not its key`);
    }
    if (!provider.modules[provider.defaultModule]) {
      problems.push(`/defaultModule "${provider.defaultModule}" is not one of /modules`);
    }
  } else if (provider.defaultModule !== 'root') {
    problems.push(`/defaultModule must be "root" when the provider has no modules`);
  }
  return problems;
}

/** Checks one parsed catalog file; throws a ProviderCatalogError naming the file and each offending path. */
export function validateProviderFile(file: string, value: unknown, expectedName: string): ProviderFile {
  let problems: string[];
  if (checker.Check(value)) {
    problems = ruleProblems(value as ProviderFile, expectedName);
  } else {
    const errors = [...checker.Errors(value)];
    const describe = (error: (typeof errors)[number]) => `${where(error.instancePath)} ${error.message}`;
    // if/then failures carry no detail of their own: the restated rules name what is missing.
    problems = errors.filter((error) => error.keyword !== 'if' && error.keyword !== 'boolean').map(describe);
    if (problems.length === 0) problems = ruleProblems(value as ProviderFile, expectedName);
    if (problems.length === 0) problems = errors.map(describe);
  }
  if (problems.length === 0) return value as ProviderFile;
  throw new ProviderCatalogError(`Provider catalog file ${file} is invalid:\n  ${problems.join('\n  ')}`);
}
