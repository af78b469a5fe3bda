import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDestinations, startTestStack, type TestStack } from '../support/stack.js';
import { PublicApi } from '../support/public-api.js';

let stack: TestStack;
let base: string;

beforeAll(async () => {
  stack = await startTestStack();
  await createDestinations(stack, ['contactsWebhook', 'companiesWebhook', 'hook']);
  base = `/projects/${stack.project.name}/integrations`;
});
afterAll(async () => stack.close());

function content(overrides: Record<string, unknown> = {}, readObject: Record<string, unknown> = {}) {
  return {
    name: 'crm-sync',
    provider: 'sandbox',
    read: {
      objects: [
        {
          objectName: 'contacts',
          destination: 'contactsWebhook',
          schedule: '*/30 * * * *',
          requiredFields: [{ fieldName: 'email' }, { fieldName: 'firstName', mapToName: 'first_name' }],
          optionalFields: [{ mapToName: 'priority', prompt: 'Which field holds priority?' }],
          backfill: { defaultPeriod: { days: 30 } },
          delivery: { mode: 'auto', pageSize: 100 },
          ...readObject,
        },
      ],
    },
    write: { objects: [{ objectName: 'contacts', inheritMapping: true }] },
    subscribe: {
      objects: [
        {
          objectName: 'contacts',
          destination: 'contactsWebhook',
          inheritFieldsAndMapping: true,
          createEvent: { enabled: 'always' },
        },
      ],
    },
    proxy: { enabled: true },
    ...overrides,
  };
}

function createBody(
  name: string,
  overrides: Record<string, unknown> = {},
  readObject: Record<string, unknown> = {},
) {
  return {
    name,
    provider: 'sandbox',
    latestRevision: { specVersion: '1.0.0', content: content({ name, ...overrides }, readObject) },
  };
}

async function expectIssue(body: unknown, name: string, detail: RegExp) {
  const response = await stack.api('POST', base, { body });
  expect(response.status).toBe(400);
  expect(response.body.title).toBe('Bad Request');
  expect(response.body.issues).toMatchObject(
    expect.arrayContaining([
      expect.objectContaining({ in: 'body', name, detail: expect.stringMatching(detail) }),
    ]),
  );
}

describe('integrations', () => {
  it('creates, lists, gets by id or name, and deletes', async () => {
    const created = await stack.api('POST', base, { body: createBody('lifecycle') });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'lifecycle',
      provider: 'sandbox',
      projectId: stack.project.id,
      latestRevision: { specVersion: '1.0.0' },
    });
    expect(created.body.latestRevision.content.read.objects[0].objectName).toBe('contacts');
    const byId = await stack.api('GET', `${base}/${created.body.id}`);
    const byName = await stack.api('GET', `${base}/lifecycle`);
    expect(byId.body).toEqual(created.body);
    expect(byName.body).toEqual(created.body);
    const listed = await stack.api('GET', base);
    expect(listed.body.map((integration: { name: string }) => integration.name)).toContain('lifecycle');
    expect((await stack.api('DELETE', `${base}/lifecycle`)).status).toBe(204);
    expect((await stack.api('GET', `${base}/${created.body.id}`)).status).toBe(404);
  });

  it('refuses a duplicate name with 409', async () => {
    expect((await stack.api('POST', base, { body: createBody('dup') })).status).toBe(201);
    const again = await stack.api('POST', base, { body: createBody('dup') });
    expect(again.status).toBe(409);
    expect(again.body.title).toBe('Conflict');
  });

  it('answers 409, not 500, when two identical creates race', async () => {
    const responses = await Promise.all(
      [1, 2, 3].map(() => stack.api('POST', base, { body: createBody('racing') })),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([201, 409, 409]);
  });

  it('takes a name typed composed or decomposed as one name, kept in NFC, in paths and manifests too', async () => {
    const composed = 'caf\u00e9-sync';
    const decomposed = 'cafe\u0301-sync';
    const created = await stack.api('POST', base, { body: createBody(decomposed) });
    expect(created.status).toBe(201);
    expect(created.body.name).toBe(composed);
    expect(created.body.latestRevision.content.name).toBe(composed);
    expect((await stack.api('POST', base, { body: createBody(composed) })).status).toBe(409);
    for (const name of [composed, decomposed]) {
      const found = await stack.api('GET', `${base}/${encodeURIComponent(name)}`);
      expect([name, found.status, found.body.id]).toEqual([name, 200, created.body.id]);
    }
    const batch = `/projects/${stack.project.name}/integrations:batch`;
    const manifest = (names: string[]) =>
      `specVersion: 1.0.0\nintegrations:\n${names.map((name) => `  - name: "${name}"\n    provider: sandbox\n`).join('')}`;
    const twice = await stack.api('PUT', batch, { body: { sourceYaml: manifest([composed, decomposed]) } });
    expect(twice.status).toBe(400);
    expect(twice.body.issues[0]).toMatchObject({
      name: 'sourceYaml:integrations[1].name',
      detail: expect.stringMatching(/declared twice/),
    });
    const applied = await stack.api('PUT', batch, { body: { sourceYaml: manifest([decomposed]) } });
    expect(applied.status).toBe(200);
    expect(applied.body.map((integration: { id: string }) => integration.id)).toEqual([created.body.id]);
    expect((await stack.api('DELETE', `${base}/${encodeURIComponent(decomposed)}`)).status).toBe(204);
  });

  it('refuses integration names that cannot be addressed in a path, in manifests too', async () => {
    await expectIssue(createBody('a/b'), 'name', /must match pattern/);
    const response = await stack.api('PUT', `/projects/${stack.project.name}/integrations:batch`, {
      body: { sourceYaml: 'specVersion: 1.0.0\nintegrations:\n  - name: "x:y"\n    provider: sandbox\n' },
    });
    expect(response.status).toBe(400);
    expect(response.body.issues[0].name).toBe('sourceYaml:integrations[0].name');
  });

  it('requires name, provider and latestRevision', async () => {
    const response = await stack.api('POST', base, { body: {} });
    expect(response.status).toBe(400);
    expect(response.body.issues.map((issue: { name: string }) => issue.name).sort()).toEqual([
      'latestRevision',
      'name',
      'provider',
    ]);
  });

  it('checks delivery.pageSize is between 50 and 500', async () => {
    await expectIssue(
      createBody('ps', {}, { delivery: { pageSize: 10 } }),
      'latestRevision.content.read.objects[0].delivery.pageSize',
      />= 50/,
    );
    await expectIssue(
      createBody('ps', {}, { delivery: { pageSize: 501 } }),
      'latestRevision.content.read.objects[0].delivery.pageSize',
      /<= 500/,
    );
  });

  it('checks delivery.mode, optionalFieldsAuto and enabled allow only their values', async () => {
    await expectIssue(
      createBody('m', {}, { delivery: { mode: 'sometimes' } }),
      'latestRevision.content.read.objects[0].delivery.mode',
      /onRequest, auto/,
    );
    await expectIssue(
      createBody('m', {}, { optionalFieldsAuto: 'some' }),
      'latestRevision.content.read.objects[0].optionalFieldsAuto',
      /all/,
    );
    await expectIssue(
      createBody('m', {}, { enabled: 'never' }),
      'latestRevision.content.read.objects[0].enabled',
      /always/,
    );
  });

  it('checks backfill.defaultPeriod has exactly one of days (>= 0) or fullHistory', async () => {
    await expectIssue(
      createBody('b', {}, { backfill: { defaultPeriod: { days: -1 } } }),
      'latestRevision.content.read.objects[0].backfill.defaultPeriod.days',
      />= 0/,
    );
    await expectIssue(
      createBody('b', {}, { backfill: { defaultPeriod: {} } }),
      'latestRevision.content.read.objects[0].backfill.defaultPeriod',
      /exactly one/,
    );
    await expectIssue(
      createBody('b', {}, { backfill: { defaultPeriod: { days: 3, fullHistory: true } } }),
      'latestRevision.content.read.objects[0].backfill.defaultPeriod',
      /exactly one/,
    );
    expect(
      (
        await stack.api('POST', base, {
          body: createBody('b-full', {}, { backfill: { defaultPeriod: { fullHistory: true } } }),
        })
      ).status,
    ).toBe(201);
  });

  it('checks schedules are valid cron', async () => {
    await expectIssue(
      createBody('c', {}, { schedule: 'every day' }),
      'latestRevision.content.read.objects[0].schedule',
      /not a valid cron/,
    );
    await expectIssue(
      createBody('c', {}, { schedule: '61 * * * *' }),
      'latestRevision.content.read.objects[0].schedule',
      /not a valid cron/,
    );
  });

  it('refuses content naming more distinct schedules than one request may check', async () => {
    const body = createBody('many-schedules');
    const read = body.latestRevision.content.read as { objects: { objectName: string; schedule: string }[] };
    read.objects = Array.from({ length: 51 }, (_, index) => ({
      ...read.objects[0],
      objectName: `object${index}`,
      schedule: `${index} * * * *`,
    }));
    await expectIssue(body, 'latestRevision.content', /51 distinct schedules; at most 50/);
    // Spaced differently, the same schedule.
    read.objects.forEach((object, index) => (object.schedule = `*/5${' '.repeat(index + 1)}* * * *`));
    const spaced = await stack.api('POST', base, { body });
    expect(spaced.body.issues?.[0]?.detail ?? '').not.toMatch(/distinct schedules/);
  });

  it('checks object names are unique per action', async () => {
    const body = createBody('u');
    const read = body.latestRevision.content.read as { objects: unknown[] };
    read.objects.push({ ...(read.objects[0] as object) });
    await expectIssue(body, 'latestRevision.content.read.objects[1].objectName', /more than once/);
  });

  it('accepts both field shapes and refuses anything else', async () => {
    await expectIssue(
      createBody('f', {}, { optionalFields: [{ prompt: 'missing mapToName and fieldName' }] }),
      // The shape it came closest to (a prompt is an input field's) says what is missing, once.
      'latestRevision.content.read.objects[0].optionalFields[0].mapToName',
      /is required/,
    );
    await expectIssue(
      createBody('f2', {}, { optionalFields: [42] }),
      'latestRevision.content.read.objects[0].optionalFields[0]',
      /must be object/,
    );
  });

  it('refuses an unknown provider and content that disagrees with the integration', async () => {
    const unknown = { ...createBody('p'), provider: 'nope' };
    unknown.latestRevision.content.provider = 'nope';
    await expectIssue(unknown, 'latestRevision.content.provider', /unknown provider/);
    await expectIssue(
      { ...createBody('q'), name: 'other-name' },
      'latestRevision.content.name',
      /must equal/,
    );
  });

  it('refuses unknown properties', async () => {
    await expectIssue(
      createBody('x', {}, { schedul: '* * * * *' }),
      'latestRevision.content.read.objects[0].schedul',
      /not an allowed property/,
    );
  });

  it('adds revisions from a manifest and keeps the newest as latestRevision', async () => {
    const created = await stack.api('POST', base, { body: createBody('revs') });
    const manifest = `specVersion: 1.1.0
integrations:
  - name: revs
    provider: sandbox
    read:
      objects:
        - objectName: companies
          destination: companiesWebhook
          schedule: "0 * * * *"
`;
    const revision = await stack.api('POST', `${base}/revs/revisions`, { body: { sourceYaml: manifest } });
    expect(revision.status).toBe(201);
    expect(revision.body.specVersion).toBe('1.1.0');
    const revisions = await stack.api('GET', `${base}/revs/revisions`);
    expect(revisions.body.map((r: { id: string }) => r.id)).toEqual([
      revision.body.id,
      created.body.latestRevision.id,
    ]);
    const latest = await stack.api('GET', `${base}/revs`);
    expect(latest.body.latestRevision.id).toBe(revision.body.id);
    const otherIntegration = await stack.api('POST', `${base}/revs/revisions`, {
      body: { sourceYaml: manifest.replace('name: revs', 'name: else') },
    });
    expect(otherIntegration.status).toBe(400);
  });
});

describe('integrations:batch', () => {
  const manifest = (names: string[], schedule = '*/15 * * * *') =>
    `specVersion: 1.0.0
integrations:
${names
  .map(
    (name) => `  - name: ${name}
    provider: sandbox
    read:
      objects:
        - objectName: contacts
          destination: hook
          schedule: "${schedule}"
`,
  )
  .join('')}`;

  it('applies a manifest, adds revisions only for changes, and deletes absent ones when destructive', async () => {
    const project = `/projects/${stack.project.name}/integrations:batch`;
    const first = await stack.api('PUT', project, { body: { sourceYaml: manifest(['batch-a', 'batch-b']) } });
    expect(first.status).toBe(200);
    expect(first.body.map((i: { name: string }) => i.name)).toEqual(['batch-a', 'batch-b']);
    const same = await stack.api('PUT', project, { body: { sourceYaml: manifest(['batch-a', 'batch-b']) } });
    expect(same.body[0].latestRevision.id).toBe(first.body[0].latestRevision.id);
    const changed = await stack.api('PUT', `${project}?destructive=true`, {
      body: { sourceYaml: manifest(['batch-a'], '0 * * * *') },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.map((i: { name: string }) => i.name)).toEqual(['batch-a']);
    expect(changed.body[0].latestRevision.id).not.toBe(first.body[0].latestRevision.id);
    expect((await stack.api('GET', `/projects/${stack.project.name}/integrations/batch-b`)).status).toBe(404);
  });

  it('answers a bare array of integrations, as the public document declares', async () => {
    const response = await stack.api('PUT', `/projects/${stack.project.name}/integrations:batch`, {
      body: { sourceYaml: manifest(['batch-public']) },
    });
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body)).toBe(true);
    expect(new PublicApi().checkResponse('api', 'PUT', '/projects/p/integrations:batch', response)).toEqual(
      [],
    );
  });

  it('refuses a manifest naming more distinct schedules than one request may check', async () => {
    const names = Array.from({ length: 51 }, (_, index) => `sched-${index}`);
    const sourceYaml = names
      .map((name, index) => manifest([name], `${index} * * * *`))
      .map((text, index) => (index ? text.split('integrations:\n')[1] : text))
      .join('');
    const response = await stack.api('PUT', `/projects/${stack.project.name}/integrations:batch`, {
      body: { sourceYaml },
    });
    expect(response.status).toBe(400);
    expect(response.body.issues[0].detail).toMatch(/51 distinct schedules; at most 50/);
  });

  it('changes nothing when any integration in the manifest is invalid', async () => {
    const sourceYaml =
      manifest(['atomic-ok']) + manifest(['atomic-bad'], 'not cron').split('integrations:\n')[1];
    const response = await stack.api('PUT', `/projects/${stack.project.name}/integrations:batch`, {
      body: { sourceYaml },
    });
    expect(response.status).toBe(400);
    expect(response.body.issues[0].name).toBe('sourceYaml:integrations[1].read.objects[0].schedule');
    expect(response.body.issues[0].detail).toMatch(/^line 16, column \d+: /);
    expect((await stack.api('GET', `/projects/${stack.project.name}/integrations/atomic-ok`)).status).toBe(
      404,
    );
  });

  it('points YAML syntax errors at their line', async () => {
    const response = await stack.api('PUT', `/projects/${stack.project.name}/integrations:batch`, {
      body: { sourceYaml: 'specVersion: 1.0.0\nintegrations:\n  - name: [unclosed\n' },
    });
    expect(response.status).toBe(400);
    expect(response.body.issues[0].detail).toMatch(/YAML error at line \d+/);
  });

  it('points schema errors at their line and path', async () => {
    const response = await stack.api('PUT', `/projects/${stack.project.name}/integrations:batch`, {
      body: {
        sourceYaml:
          'specVersion: 1.0.0\nintegrations:\n  - name: x\n    provider: sandbox\n    read:\n      objects:\n        - objectName: contacts\n          schedule: "* * * * *"\n',
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.issues).toMatchObject([
      expect.objectContaining({
        name: 'sourceYaml:integrations[0].read.objects[0].destination',
        detail: expect.stringMatching(/^line 7, column 11: .*is required/),
      }),
    ]);
  });
});
