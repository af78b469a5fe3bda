/**
 * A project with a full API key in a bench's own database, and a JSON caller of the api host that
 * throws on anything but a 2xx: what every bench that drives Ferry through its API starts with.
 */
export interface BenchProject {
  id: string;
  apiKey: string;
  api(method: string, path: string, body?: unknown): Promise<any>;
}

export async function createBenchProject(runId: string, apiUrl: string): Promise<BenchProject> {
  const { transaction } = await import('../../src/db/orm.js');
  const { createApiKey, createOrg, createProject } = await import('../../src/domain/projects.js');
  const project = await transaction(async (em) => {
    const org = await createOrg(em, 'bench');
    const created = await createProject(em, { name: `bench-${runId}`.replace(/_/g, '-'), orgId: org.id });
    return { id: created.id, apiKey: createApiKey(em, created.id, { label: 'bench' }).key };
  });
  return {
    ...project,
    async api(method, path, body) {
      const response = await fetch(`${apiUrl}${path}`, {
        method,
        headers: { 'x-api-key': project.apiKey, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
      return text ? JSON.parse(text) : undefined;
    },
  };
}
