import type { Sandbox } from '../../src/sandbox/index.js';

/**
 * The emails starting with `prefix` of every contact created at the sandbox since it started, one
 * entry per provider record: a write done twice shows as a repeated email.
 */
export async function createdContactEmails(sandbox: Sandbox, prefix: string): Promise<string[]> {
  const emails: string[] = [];
  for (let cursor: string | null = null; ;) {
    const query = new URLSearchParams({
      updatedSince: sandbox.anchor,
      limit: '1000',
      ...(cursor && { cursor }),
    });
    const response = await fetch(`${sandbox.url}/api/v1/contacts?${query}`, {
      headers: { 'x-api-key': 'sandbox-demo-key' },
    });
    const page = (await response.json()) as { results: { email?: string }[]; nextCursor: string | null };
    emails.push(
      ...page.results.map((contact) => contact.email ?? '').filter((email) => email.startsWith(prefix)),
    );
    cursor = page.nextCursor;
    if (!cursor) return emails;
  }
}
