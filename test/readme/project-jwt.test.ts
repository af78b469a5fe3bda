import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * The README's project-token example, run as written: its openssl commands make the key pair, the
 * public half is registered as the README says, and its `mint.mjs` signs tokens that Ferry accepts
 * for the whole project, or for one group only when a groupRef is given.
 */

let stack: TestStack;
let dir: string;

/** The code blocks of the README section "Bearer tokens and project JWT keys", by language. */
function blocks(language: 'sh' | 'js'): string[] {
  const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Bearer tokens and project JWT keys');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...section.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
}

beforeAll(async () => {
  stack = await startTestStack();
  // Inside the project, so `import 'jose'` resolves as it would after `npm install jose`.
  dir = mkdtempSync(join(process.cwd(), '.readme-jwt-'));
  symlinkSync(join(process.cwd(), 'node_modules'), join(dir, 'node_modules'));
});

afterAll(async () => {
  await stack?.close();
  if (dir) execFileSync('rm', ['-rf', dir]);
});

describe("the README's project token example", () => {
  it('mints tokens Ferry accepts, project-wide or for one group', async () => {
    const [keys] = blocks('sh');
    execFileSync('sh', ['-c', keys], { cwd: dir, stdio: 'ignore' });
    const [mint] = blocks('js');
    writeFileSync(join(dir, 'mint.mjs'), mint);

    const registered = await stack.api('POST', `/projects/${stack.project.id}/jwt-keys`, {
      body: {
        label: 'readme',
        algorithm: 'RSA',
        publicKeyPem: readFileSync(join(dir, 'ferry-jwt.pub.pem'), 'utf8'),
      },
    });
    expect(registered.status).toBe(201);
    const minted = (...args: string[]) =>
      execFileSync('node', ['mint.mjs', registered.body.id, ...args], { cwd: dir })
        .toString()
        .trim();

    // The comment's curl: a token without a group acts for the whole project.
    const asProject = await stack.api('GET', `/projects/${stack.project.id}/installations`, {
      apiKey: undefined,
      bearer: minted(),
    });
    expect(asProject.status).toBe(200);

    // A browser's token names one group: that group's lists are served, another group's refused.
    const groupToken = minted('acme');
    const own = await stack.api('GET', `/projects/${stack.project.id}/connections?groupRef=acme`, {
      apiKey: undefined,
      bearer: groupToken,
    });
    expect(own.status).toBe(200);
    const other = await stack.api('GET', `/projects/${stack.project.id}/connections?groupRef=globex`, {
      apiKey: undefined,
      bearer: groupToken,
    });
    expect(other.status).toBe(403);
    expect(other.headers.get('content-type')).toBe('application/problem+json');
    // Builder-only endpoints take no project token at all.
    const topics = await stack.api('GET', `/projects/${stack.project.id}/topics`, {
      apiKey: undefined,
      bearer: groupToken,
    });
    expect(topics.status).toBe(403);
  });
});
