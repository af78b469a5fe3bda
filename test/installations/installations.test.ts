import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { transaction } from '../../src/db/orm.js';
import { temporalClient } from '../../src/temporal/client.js';
import { installationWorkflowId } from '../../src/temporal/contracts/workflow-ids.js';
import { ConnectionEntity } from '../../src/db/entities/connection.js';
import { InstallationConfigEntity, InstallationEntity } from '../../src/db/entities/installation.js';
import { encryptJson } from '../../src/crypto/secrets.js';
import { createTestProject, request, startTestStack, type TestStack } from '../support/stack.js';
import { projectJwtMinter } from '../support/project-jwt.js';
import { PublicApi } from '../support/public-api.js';
import {
  YEARLY,
  configContent,
  connectGroup,
  createDestination,
  createIntegration,
  events,
  install,
  issueNames,
  type InstallationFixture,
} from './support.js';

let stack: TestStack;
let fixture: InstallationFixture;

/** A read object as answers show it: with `selectedFieldMappings`, empty when none were given. */
const answered = (object: Record<string, unknown>) => ({ selectedFieldMappings: {}, ...object });

/** A second read object's config, as the fixture's manifest declares it. */
const companiesConfig = {
  objectName: 'companies',
  schedule: YEARLY,
  destination: 'hooks',
  selectedFields: { anything: true },
};

beforeAll(async () => {
  stack = await startTestStack({ worker: true });
  await createDestination(stack);
  fixture = await createIntegration(stack);
}, 60_000);

afterAll(async () => stack.close());

async function expectInvalid(body: unknown, names: string[], base = fixture.base) {
  const response = await stack.api('POST', base, { body });
  expect({ status: response.status, names: issueNames(response.body) }).toEqual({
    status: 400,
    names: expect.arrayContaining(names),
  });
  expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
  return response;
}

async function installationCount(groupRef: string): Promise<number> {
  return transaction(async (em) => {
    const { GroupEntity } = await import('../../src/db/entities/connection.js');
    const group = await em.findOne(GroupEntity, { projectId: stack.project.id, groupRef });
    return group ? em.count(InstallationEntity, { groupId: group.id }) : 0;
  });
}

describe('creating installations', () => {
  it('creates an installation with its first config and answers the spec’s shape, without secrets', async () => {
    const { groupRef, connectionId } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    expect(created).toMatchObject({
      projectId: stack.project.id,
      integrationId: fixture.integrationId,
      healthStatus: 'healthy',
      createdBy: `consumer:${groupRef}-admin`,
      connection: {
        id: connectionId,
        provider: 'sandboxApiKey',
        group: { groupRef },
        consumer: { consumerRef: `${groupRef}-admin` },
      },
      group: { groupRef, groupName: `${groupRef} Inc.` },
      config: {
        revisionId: fixture.revisionId,
        createdBy: expect.stringMatching(/^builder:/),
        content: configContent(),
      },
    });
    expect(JSON.stringify(created)).not.toContain('sandbox-demo-key');
    expect(created.updateTime).toBeDefined();

    const [event] = (await events(stack.project.id, 'installation.created')).filter(
      (data) => data.installationId === created.id,
    );
    expect(event).toMatchObject({
      projectId: stack.project.id,
      provider: 'sandboxApiKey',
      integrationId: fixture.integrationId,
      integrationName: fixture.integrationName,
      connectionId,
      groupRef,
      groupName: `${groupRef} Inc.`,
      consumerRef: `${groupRef}-admin`,
      consumerName: `${groupRef}-admin`,
      config: { id: created.config.id, content: configContent() },
    });

    const got = await stack.api('GET', `${fixture.base}/${created.id}`);
    expect(got.body).toEqual(created);
    const byName = await stack.api(
      'GET',
      `/projects/${stack.project.name}/integrations/${fixture.integrationName}/installations/${created.id}`,
    );
    expect(byName.body.id).toBe(created.id);
    const perProject = await stack.api(
      'GET',
      `/projects/${stack.project.name}/installations?groupRef=${groupRef}`,
    );
    expect(perProject.body.map((row: { id: string }) => row.id)).toEqual([created.id]);
    const perIntegration = await stack.api('GET', `${fixture.base}?groupRef=${groupRef}`);
    expect(perIntegration.body.map((row: { id: string }) => row.id)).toEqual([created.id]);
    expect((await stack.api('GET', `${fixture.base}?groupRef=nobody`)).body).toEqual([]);
    expect(
      (await stack.api('GET', `/projects/${stack.project.name}/installations`)).body.length,
    ).toBeGreaterThanOrEqual(1);

    const again = await stack.api('POST', fixture.base, {
      body: { groupRef, config: { content: configContent() } },
    });
    expect(again).toMatchObject({ status: 409, body: { title: 'Conflict' } });
  });

  it('answers each read object with selectedFieldMappings and the installation as the public document declares', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await stack.api('POST', fixture.base, {
      body: { groupRef, config: { content: configContent() } },
    });
    expect(created.status).toBe(201);
    expect(configContent().read.objects.contacts).not.toHaveProperty('selectedFieldMappings');
    expect(created.body.config.content.read.objects.contacts.selectedFieldMappings).toEqual({});
    const publicApi = new PublicApi();
    expect(publicApi.checkResponse('api', 'POST', fixture.base, created)).toEqual([]);
    const path = `${fixture.base}/${created.body.id}`;
    expect(publicApi.checkResponse('api', 'GET', path, await stack.api('GET', path))).toEqual([]);
    const listed = await stack.api('GET', `${fixture.base}?groupRef=${groupRef}`);
    expect(publicApi.checkResponse('api', 'GET', fixture.base, listed)).toEqual([]);
    const project = `/projects/${stack.project.name}/installations`;
    expect(publicApi.checkResponse('api', 'GET', project, await stack.api('GET', project))).toEqual([]);
  });

  it('uses the named connection and revision, and the config author the caller names', async () => {
    const { groupRef, connectionId } = await connectGroup(stack);
    const response = await stack.api('POST', fixture.base, {
      body: {
        groupRef,
        connectionId,
        config: { revisionId: fixture.revisionId, createdBy: 'consumer:alice', content: configContent() },
      },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      connection: { id: connectionId },
      config: { createdBy: 'consumer:alice' },
    });
  });

  it('refuses an unknown group, a group without a connection, and connections of another provider or project', async () => {
    await expectInvalid({ groupRef: 'no-such-group', config: { content: configContent() } }, ['groupRef']);

    const { groupRef } = await connectGroup(stack);
    const foreign = await transaction(async (em) => {
      const { GroupEntity } = await import('../../src/db/entities/connection.js');
      const group = await em.findOneOrFail(GroupEntity, { projectId: stack.project.id, groupRef });
      const connection = em.create(ConnectionEntity, {
        id: randomUUID(),
        projectId: stack.project.id,
        provider: 'sandbox',
        groupId: group.id,
        consumerId: (await em.findOneOrFail(ConnectionEntity, { groupId: group.id })).consumerId,
        authScheme: 'oauth2/authorizationCode',
        status: 'working',
        credentialsEncrypted: encryptJson({ accessToken: 'x' }),
        scopes: [],
        providerMetadata: {},
        createTime: new Date(),
        updateTime: new Date(),
      });
      return connection.id;
    });
    const otherProvider = await expectInvalid(
      { groupRef, connectionId: foreign, config: { content: configContent() } },
      ['connectionId'],
    );
    expect(otherProvider.body.issues[0].detail).toMatch(/sandbox connection/);

    const otherProject = await createTestProject();
    const elsewhere = await request(
      'POST',
      `${stack.urls.api}/projects/${otherProject.name}/connections:generate`,
      {
        apiKey: otherProject.apiKey,
        body: { provider: 'sandboxApiKey', groupRef, consumerRef: 'someone', apiKey: 'sandbox-demo-key' },
      },
    );
    expect(elsewhere.status).toBe(201);
    await expectInvalid({ groupRef, connectionId: elsewhere.body.id, config: { content: configContent() } }, [
      'connectionId',
    ]);
    await expectInvalid({ groupRef, connectionId: 'not-a-uuid', config: { content: configContent() } }, [
      'connectionId',
    ]);

    const { connectionId: otherGroupsConnection } = await connectGroup(stack);
    await expectInvalid(
      { groupRef, connectionId: otherGroupsConnection, config: { content: configContent() } },
      ['connectionId'],
    );

    await transaction(async (em) => {
      const { GroupEntity } = await import('../../src/db/entities/connection.js');
      em.create(GroupEntity, {
        id: randomUUID(),
        projectId: stack.project.id,
        groupRef: 'lonely',
        groupName: 'Lonely',
        createTime: new Date(),
        updateTime: new Date(),
      });
    });
    await expectInvalid({ groupRef: 'lonely', config: { content: configContent() } }, ['groupRef']);
    expect(await installationCount(groupRef)).toBe(0);
  });

  it('refuses a revision of another integration', async () => {
    const { groupRef } = await connectGroup(stack);
    const other = await createIntegration(stack);
    await expectInvalid({ groupRef, config: { revisionId: other.revisionId, content: configContent() } }, [
      'config.revisionId',
    ]);
    await expectInvalid({ groupRef, config: { revisionId: 'latest', content: configContent() } }, [
      'config.revisionId',
    ]);
  });

  it('rejects a bad config whole, naming every rule it breaks, and writes nothing', async () => {
    const { groupRef } = await connectGroup(stack);
    const content = {
      provider: 'sandbox',
      read: {
        objects: {
          contacts: {
            objectName: 'contacts',
            schedule: '* * * * *',
            destination: 'nowhere',
            selectedFields: { email: true, shoeSize: true },
            selectedFieldMappings: { colour: 'x' },
          },
          tickets: { objectName: 'tickets', schedule: YEARLY, destination: 'hooks', selectedFields: {} },
          companies: { objectName: 'firms', schedule: 'not cron', destination: 'hooks', selectedFields: {} },
        },
      },
      write: { objects: { deals: { objectName: 'deals' } } },
      subscribe: { objects: { contacts: { objectName: 'contacts', destination: 'void' } } },
    };
    const response = await expectInvalid({ groupRef, config: { content } }, [
      'config.content.provider',
      'config.content.read.objects.contacts.schedule',
      'config.content.read.objects.contacts.destination',
      'config.content.read.objects.contacts.selectedFields.shoeSize',
      'config.content.read.objects.contacts.selectedFieldMappings.colour',
      'config.content.read.objects.tickets',
      'config.content.read.objects.companies.objectName',
      'config.content.read.objects.companies.schedule',
      'config.content.write.objects.deals',
      'config.content.subscribe.objects.contacts.destination',
    ]);
    const schedule = response.body.issues.find((issue: { name: string }) =>
      issue.name.endsWith('contacts.schedule'),
    );
    expect(schedule.detail).toMatch(/minimum interval is 300 s/);
    // `companies` offers all fields (optionalFieldsAuto: all), so any selection passes.
    expect(issueNames(response.body)).not.toContain('config.content.read.objects.companies.selectedFields');

    await expectInvalid(
      {
        groupRef,
        config: {
          content: { provider: 'sandboxApiKey', read: { objects: { contacts: { objectName: 'contacts' } } } },
        },
      },
      // schedule and destination come from the manifest when left out (see the React components below)
      ['config.content.read.objects.contacts.selectedFields'],
    );
    await expectInvalid({ groupRef, config: { content: { ...configContent(), extra: true } } }, [
      'config.content.extra',
    ]);
    await expectInvalid({ groupRef }, ['config']);
    expect(await installationCount(groupRef)).toBe(0);
    const created = await events(stack.project.id, 'installation.created');
    expect(created.filter((data) => data.groupRef === groupRef)).toEqual([]);
  });

  it('takes a read object without selectedFields when its manifest object offers no optional fields', async () => {
    const { groupRef } = await connectGroup(stack);
    // `companies` offers every field (optionalFieldsAuto: all): the customer must still choose.
    await expectInvalid(
      {
        groupRef,
        config: {
          content: {
            provider: 'sandboxApiKey',
            read: { objects: { companies: { objectName: 'companies' } } },
          },
        },
      },
      ['config.content.read.objects.companies.selectedFields'],
    );
    // `deals` declares no optional fields: there is nothing to select, so nothing to send.
    const created = await stack.api('POST', fixture.base, {
      body: {
        groupRef,
        config: {
          content: { provider: 'sandboxApiKey', read: { objects: { deals: { objectName: 'deals' } } } },
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.config.content.read.objects.deals).toEqual(
      answered({ objectName: 'deals', schedule: YEARLY, destination: 'hooks', selectedFields: {} }),
    );
  });

  it('answers 404 for unknown integrations and installations, and for another project’s key', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    expect((await stack.api('GET', `${fixture.base}/${randomUUID()}`)).status).toBe(404);
    expect((await stack.api('GET', `${fixture.base}/not-a-uuid`)).status).toBe(404);
    const other = await createIntegration(stack);
    expect((await stack.api('GET', `${other.base}/${created.id}`)).status).toBe(404);
    expect(
      (
        await stack.api('POST', `/projects/${stack.project.name}/integrations/nope/installations`, {
          body: { groupRef, config: { content: configContent() } },
        })
      ).status,
    ).toBe(404);
    expect(
      (await stack.api('GET', `/projects/${stack.project.name}/integrations/nope/installations`)).status,
    ).toBe(404);
    const anonymous = await request('GET', `${stack.urls.api}/projects/${stack.project.name}/installations`);
    expect(anonymous).toMatchObject({ status: 401, body: { title: 'Unauthorized' } });
    expect((await stack.api('GET', `/projects/${stack.project.name}/installations?groupRef=`)).status).toBe(
      400,
    );
    const stranger = await createTestProject();
    const foreign = await request('GET', `${stack.urls.api}${fixture.base}/${created.id}`, {
      apiKey: stranger.apiKey,
    });
    expect(foreign.status).toBe(404);
  });
});

describe('updating installations with a field mask', () => {
  it('makes a new config version per change, moves updateTime and reports lastConfig', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const path = `${fixture.base}/${created.id}`;
    const schedule = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.content.read.objects.contacts.schedule'],
        installation: { config: { content: { read: { objects: { contacts: { schedule: '0 * * * *' } } } } } },
      },
    });
    expect(schedule.status).toBe(200);
    expect(schedule.body.config.id).not.toBe(created.config.id);
    expect(schedule.body.config.content.read.objects.contacts).toEqual(
      answered({ ...configContent().read.objects.contacts, schedule: '0 * * * *' }),
    );
    expect(Date.parse(schedule.body.updateTime)).toBeGreaterThan(Date.parse(created.updateTime));

    const [updated] = (await events(stack.project.id, 'installation.updated')).filter(
      (data) => data.installationId === created.id,
    );
    expect(updated).toMatchObject({
      groupRef,
      config: { id: schedule.body.config.id },
      lastConfig: {
        id: created.config.id,
        content: { read: { objects: { contacts: { schedule: YEARLY } } } },
      },
    });

    const companies = companiesConfig;
    const added = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.content.read.objects.companies', 'config.content.read.objects.contacts'],
        installation: { config: { content: { read: { objects: { companies } } } } },
      },
    });
    expect(added.status).toBe(200);
    expect(added.body.config.content.read.objects).toEqual({ companies: answered(companies) });

    const unchanged = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.content.read.objects.companies'],
        installation: { config: { content: { read: { objects: { companies } } } } },
      },
    });
    expect(unchanged.body.config.id).toBe(added.body.config.id);

    const versions = await transaction((em) =>
      em.count(InstallationConfigEntity, { installationId: created.id }),
    );
    expect(versions).toBe(3);
  });

  it('refuses unknown and read-only paths by name, and invalid results, changing nothing', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const path = `${fixture.base}/${created.id}`;
    const paths = await stack.api('PATCH', path, {
      body: {
        updateMask: [
          'healthStatus',
          'id',
          'config.content.provider',
          'name',
          'config.content.colour',
          'config.content.read.objects.contacts.colour',
          'config.content.read.things',
          'config.content.read.objects.contacts.schedule',
        ],
        installation: {},
      },
    });
    expect(paths.status).toBe(400);
    const refused = paths.body.issues.map((issue: { value: string }) => issue.value);
    expect(refused).toEqual([
      'healthStatus',
      'id',
      'config.content.provider',
      'name',
      'config.content.colour',
      'config.content.read.objects.contacts.colour',
      'config.content.read.things',
    ]);
    expect(paths.body.issues[0].detail).toMatch(/read-only/);

    const tooOften = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.content.read.objects.contacts.schedule'],
        installation: {
          config: { content: { read: { objects: { contacts: { schedule: '*/1 * * * *' } } } } },
        },
      },
    });
    expect(issueNames(tooOften.body)).toEqual(['config.content.read.objects.contacts.schedule']);
    const foreignRevision = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.revisionId'],
        installation: { config: { revisionId: (await createIntegration(stack)).revisionId } },
      },
    });
    expect(issueNames(foreignRevision.body)).toEqual(['installation.config.revisionId']);
    const emptyMask = await stack.api('PATCH', path, { body: { updateMask: [], installation: {} } });
    expect(emptyMask.status).toBe(400);
    expect((await stack.api('GET', path)).body.config.id).toBe(created.config.id);
  });
});

describe('updating with the public API’s connectionId and config.createdBy mask paths', () => {
  it('credits the new config version to config.createdBy and accepts the connection in use', async () => {
    const { groupRef, connectionId } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const path = `${fixture.base}/${created.id}`;
    const response = await stack.api('PATCH', path, {
      body: {
        updateMask: ['connectionId', 'config.createdBy', 'config.content.read.objects.contacts.schedule'],
        installation: {
          connectionId,
          config: {
            createdBy: 'consumer:alice',
            content: { read: { objects: { contacts: { schedule: '0 * * * *' } } } },
          },
        },
      },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      connection: { id: connectionId },
      config: {
        createdBy: 'consumer:alice',
        content: { read: { objects: { contacts: { schedule: '0 * * * *' } } } },
      },
    });
    expect(response.body.config.id).not.toBe(created.config.id);
  });

  it('expands * in a mask path to every object, and a trailing * to the whole map', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const path = `${fixture.base}/${created.id}`;
    const contacts = configContent().read.objects.contacts;
    const companies = companiesConfig;
    const both = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.content.read.objects.companies'],
        installation: { config: { content: { read: { objects: { companies } } } } },
      },
    });
    expect(Object.keys(both.body.config.content.read.objects).sort()).toEqual(['companies', 'contacts']);

    const hourly = { schedule: '0 * * * *' };
    const everySchedule = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.content.read.objects.*.schedule'],
        installation: { config: { content: { read: { objects: { contacts: hourly, companies: hourly } } } } },
      },
    });
    expect(everySchedule.status).toBe(200);
    expect(everySchedule.body.config.content.read.objects).toEqual({
      contacts: answered({ ...contacts, ...hourly }),
      companies: answered({ ...companies, ...hourly }),
    });

    const replaced = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.content.read.objects.*'],
        installation: { config: { content: { read: { objects: { contacts } } } } },
      },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.config.content.read.objects).toEqual({ contacts: answered(contacts) });

    // A * passes over what the server owns: an Installation echoed back whole, with its config's id
    // and createTime, updates under config.* (config.id named alone is still refused as read-only).
    const fetched = (await stack.api('GET', path)).body;
    const echoed = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.*'],
        installation: { ...fetched, config: { ...fetched.config, createdBy: 'consumer:echo' } },
      },
    });
    expect(echoed.status).toBe(200);
    const readOnlyAlone = await stack.api('PATCH', path, {
      body: { updateMask: ['config.id'], installation: fetched },
    });
    expect(readOnlyAlone.status).toBe(400);

    // A trailing * keeps the provider too.
    const wholeContent = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.content.*'],
        installation: {
          config: {
            content: { provider: 'elsewhere', read: { objects: { contacts } }, proxy: { enabled: false } },
          },
        },
      },
    });
    expect(wholeContent.status).toBe(200);
    expect(wholeContent.body.config.content).toEqual({
      provider: 'sandboxApiKey',
      read: { objects: { contacts: answered(contacts) } },
      proxy: { enabled: false },
    });

    const unknownField = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.content.read.objects.*.colour'],
        installation: { config: { content: { read: { objects: { contacts: { colour: 'red' } } } } } },
      },
    });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.issues[0]).toMatchObject({
      name: 'updateMask',
      value: 'config.content.read.objects.contacts.colour',
    });

    // A request cannot make a * stand for a huge number of paths.
    const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`o${i}`, hourly]));
    const tooMany = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.content.read.objects.*.schedule', 'config.content.read.objects.*.destination'],
        installation: { config: { content: { read: { objects: many } } } },
      },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.issues[0]).toMatchObject({
      name: 'updateMask',
      detail: expect.stringMatching(/1000 paths/),
    });
    expect((await stack.api('GET', path)).body.config.id).toBe(wholeContent.body.config.id);
  });

  it('refuses another group’s connection, a missing value and a malformed author, changing nothing', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const path = `${fixture.base}/${created.id}`;
    const { connectionId: otherGroups } = await connectGroup(stack);
    const schedule = { read: { objects: { contacts: { schedule: '0 * * * *' } } } };
    const cases: [unknown, string][] = [
      [
        {
          updateMask: ['connectionId', 'config.content.read.objects.contacts.schedule'],
          installation: { connectionId: otherGroups, config: { content: schedule } },
        },
        'installation.connectionId',
      ],
      [
        { updateMask: ['connectionId'], installation: { connectionId: randomUUID() } },
        'installation.connectionId',
      ],
      [{ updateMask: ['connectionId'], installation: {} }, 'installation.connectionId'],
      [{ updateMask: ['config.createdBy'], installation: { config: {} } }, 'installation.config.createdBy'],
      [
        { updateMask: ['config.createdBy'], installation: { config: { createdBy: 'somebody' } } },
        'installation.config.createdBy',
      ],
    ];
    for (const [body, name] of cases) {
      const response = await stack.api('PATCH', path, { body });
      expect({ status: response.status, names: issueNames(response.body) }).toEqual({
        status: 400,
        names: [name],
      });
    }
    const after = await stack.api('GET', path);
    expect(after.body.config.id).toBe(created.config.id);
    expect(after.body.connection.id).toBe(created.connection.id);
  });
});

describe('patching one object’s config content', () => {
  const patchPath = (objectName: string) =>
    `/projects/${stack.project.name}/integrations/${fixture.integrationId}/objects/${objectName}/config-content`;

  it('applies JSON Patch operations atomically', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const patched = await stack.api('PATCH', patchPath('contacts'), {
      body: {
        groupRef,
        action: 'read',
        changes: [
          { op: 'replace', path: '/schedule', value: '0 */2 * * *' },
          { op: 'add', path: '/selectedFields/lastName', value: true },
          { op: 'remove', path: '/selectedFields/firstName' },
        ],
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.config.content.read.objects.contacts).toMatchObject({
      schedule: '0 */2 * * *',
      selectedFields: { email: true, lastName: true },
    });
    expect(patched.body.config.content.read.objects.contacts.selectedFields.firstName).toBeUndefined();

    const failing = await stack.api('PATCH', patchPath('contacts'), {
      body: {
        installationId: created.id,
        action: 'read',
        changes: [
          { op: 'replace', path: '/schedule', value: '0 3 * * *' },
          { op: 'remove', path: '/selectedFields/middleName' },
          { op: 'test', path: '/destination', value: 'elsewhere' },
        ],
      },
    });
    expect(failing.status).toBe(400);
    expect(issueNames(failing.body)).toEqual(['changes[1].path', 'changes[2].path']);
    const invalidResult = await stack.api('PATCH', patchPath('contacts'), {
      body: {
        groupRef,
        action: 'read',
        changes: [{ op: 'replace', path: '/schedule', value: '*/2 * * * *' }],
      },
    });
    expect(issueNames(invalidResult.body)).toEqual(['config.content.read.objects.contacts.schedule']);
    const current = await stack.api('GET', `${fixture.base}/${created.id}`);
    expect(current.body.config.id).toBe(patched.body.config.id);

    const added = await stack.api('PATCH', patchPath('companies'), {
      body: {
        groupRef,
        action: 'read',
        changes: [
          { op: 'add', path: '/schedule', value: YEARLY },
          { op: 'add', path: '/destination', value: 'hooks' },
          { op: 'add', path: '/selectedFields', value: { name: true } },
        ],
      },
    });
    expect(added.status).toBe(200);
    expect(added.body.config.content.read.objects.companies).toEqual({
      objectName: 'companies',
      schedule: YEARLY,
      destination: 'hooks',
      selectedFields: { name: true },
      selectedFieldMappings: {},
    });
  });

  it('refuses paths outside the object config, undeclared objects and a missing installation', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await install(stack, fixture, groupRef);
    const outside = await stack.api('PATCH', patchPath('contacts'), {
      body: {
        groupRef,
        action: 'read',
        changes: [
          { op: 'replace', path: 'schedule', value: YEARLY },
          { op: 'add', path: '/__proto__/polluted', value: true },
          { op: 'remove', path: '' },
        ],
      },
    });
    expect(issueNames(outside.body)).toEqual(['changes[0].path', 'changes[1].path', 'changes[2].path']);
    const unknownField = await stack.api('PATCH', patchPath('contacts'), {
      body: { groupRef, action: 'read', changes: [{ op: 'add', path: '/colour', value: 'red' }] },
    });
    expect(issueNames(unknownField.body)).toEqual(['config.content.read.objects.contacts.colour']);
    const undeclared = await stack.api('PATCH', patchPath('companies'), {
      body: { groupRef, action: 'write', changes: [{ op: 'add', path: '/objectName', value: 'companies' }] },
    });
    expect(undeclared.body.issues).toMatchObject([
      expect.objectContaining({ in: 'path', name: 'objectName', value: 'companies' }),
    ]);
    const noTarget = await stack.api('PATCH', patchPath('contacts'), {
      body: { action: 'read', changes: [{ op: 'replace', path: '/schedule', value: YEARLY }] },
    });
    expect(issueNames(noTarget.body)).toEqual(['groupRef']);
    const noChanges = await stack.api('PATCH', patchPath('contacts'), {
      body: { groupRef, action: 'read', changes: [] },
    });
    expect(issueNames(noChanges.body)).toEqual(['changes']);
    const unknownGroup = await stack.api('PATCH', patchPath('contacts'), {
      body: {
        groupRef: 'nobody',
        action: 'read',
        changes: [{ op: 'replace', path: '/schedule', value: YEARLY }],
      },
    });
    expect(unknownGroup.status).toBe(404);
    const { groupRef: otherGroup } = await connectGroup(stack);
    await install(stack, fixture, otherGroup);
    const mismatch = await stack.api('PATCH', patchPath('contacts'), {
      body: {
        groupRef: otherGroup,
        installationId: created.id,
        action: 'read',
        changes: [{ op: 'replace', path: '/schedule', value: YEARLY }],
      },
    });
    expect(issueNames(mismatch.body)).toEqual(['installationId']);
    expect((await stack.api('GET', `${fixture.base}/${created.id}`)).body.config.id).toBe(created.config.id);
  });
});

describe('deleting', () => {
  it('deletes an installation, and its connection once no other installation uses it', async () => {
    const { groupRef, connectionId } = await connectGroup(stack);
    const second = await createIntegration(stack);
    const first = await install(stack, fixture, groupRef);
    const other = await install(stack, second, groupRef);
    expect(other.connection.id).toBe(connectionId);

    expect((await stack.api('DELETE', `${fixture.base}/${first.id}`)).status).toBe(204);
    expect((await stack.api('GET', `${fixture.base}/${first.id}`)).status).toBe(404);
    expect(
      (await stack.api('GET', `/projects/${stack.project.name}/connections/${connectionId}`)).status,
    ).toBe(200);

    // Deleting the integration deletes its installation as DELETE of it does, as the public API does.
    expect(
      (await stack.api('DELETE', `/projects/${stack.project.name}/integrations/${second.integrationId}`))
        .status,
    ).toBe(204);
    expect((await stack.api('GET', `${second.base}/${other.id}`)).status).toBe(404);
    expect(
      (await stack.api('GET', `/projects/${stack.project.name}/connections/${connectionId}`)).status,
    ).toBe(404);
    expect(
      (await stack.api('GET', `/projects/${stack.project.name}/integrations/${second.integrationId}`)).status,
    ).toBe(404);
    const { status } = await (
      await temporalClient()
    ).workflow
      .getHandle(installationWorkflowId(other.id))
      .describe();
    expect(status.name).not.toBe('RUNNING');

    const deleted = (await events(stack.project.id, 'installation.deleted')).map(
      (data) => data.installationId,
    );
    expect(deleted).toEqual(expect.arrayContaining([first.id, other.id]));
    const connectionDeleted = await events(stack.project.id, 'connection.deleted');
    expect(connectionDeleted).toEqual(
      expect.arrayContaining([expect.objectContaining({ connectionId, groupRef })]),
    );
  });

  it('an integration delete interrupted halfway keeps the integration, and a retry finishes it', async () => {
    const integration = await createIntegration(stack);
    const kept = await install(stack, integration, (await connectGroup(stack)).groupRef);
    const other = await install(stack, integration, (await connectGroup(stack)).groupRef);
    // A fault in PostgreSQL while one installation's rows go (a trigger refusing that one delete).
    const refuse = `refuse_delete_${kept.id.replaceAll('-', '_')}`;
    await transaction(async (em) => {
      await em.execute(
        `create function ${refuse}() returns trigger language plpgsql as $$ begin raise exception 'injected fault'; end $$`,
      );
      await em.execute(
        `create trigger ${refuse} before delete on installations for each row when (old.id = '${kept.id}') execute function ${refuse}()`,
      );
    });
    const integrationPath = `/projects/${stack.project.name}/integrations/${integration.integrationId}`;
    try {
      const interrupted = await stack.api('DELETE', integrationPath);
      expect(interrupted.status).toBe(500);
      // Nothing of the integration itself went: it and the installation that failed are still there.
      expect((await stack.api('GET', integrationPath)).status).toBe(200);
      expect((await stack.api('GET', `${integration.base}/${kept.id}`)).status).toBe(200);
    } finally {
      await transaction(async (em) => {
        await em.execute(`drop trigger ${refuse} on installations`);
        await em.execute(`drop function ${refuse}()`);
      });
    }

    expect((await stack.api('DELETE', integrationPath)).status).toBe(204);
    expect((await stack.api('GET', integrationPath)).status).toBe(404);
    for (const installation of [kept, other]) {
      expect((await stack.api('GET', `${integration.base}/${installation.id}`)).status).toBe(404);
    }
    // Each installation was deleted once, whichever attempt did it.
    const deleted = (await events(stack.project.id, 'installation.deleted')).map(
      (data) => data.installationId,
    );
    expect(deleted.filter((id) => id === kept.id)).toHaveLength(1);
    expect(deleted.filter((id) => id === other.id)).toHaveLength(1);
  });
});

describe('as the public React components (@amp-labs/react) send them', () => {
  /** The read object the components post: no schedule, no destination, and their extra maps. */
  const fromComponents = (selectedFields: Record<string, boolean>) => ({
    objectName: 'contacts',
    selectedFields,
    selectedValueMappings: {},
    dynamicMappingsInput: [],
    selectedFieldMappings: {},
    // not sent by the components; here it keeps the manifest's 30-day backfill from starting a read
    backfill: { defaultPeriod: { days: 0 } },
  });

  it('fills schedule and destination from the manifest and keeps the extra fields', async () => {
    const { groupRef, connectionId } = await connectGroup(stack);
    const created = await stack.api('POST', fixture.base, {
      body: {
        groupRef,
        connectionId,
        config: {
          content: {
            provider: 'sandboxApiKey',
            read: { objects: { contacts: fromComponents({ firstName: true }) } },
          },
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.config.content.read.objects.contacts).toEqual({
      ...fromComponents({ firstName: true }),
      schedule: YEARLY,
      destination: 'hooks',
    });

    // An update through a mask replaces the object; what it leaves out comes from the manifest again.
    const path = `${fixture.base}/${created.body.id}`;
    await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.content.read.objects.contacts.schedule'],
        installation: { config: { content: { read: { objects: { contacts: { schedule: '0 * * * *' } } } } } },
      },
    });
    const updated = await stack.api('PATCH', path, {
      body: {
        updateMask: ['config.content.read.objects.contacts'],
        installation: {
          config: {
            content: { read: { objects: { contacts: fromComponents({ firstName: true, lastName: true }) } } },
          },
        },
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.config.content.read.objects.contacts).toMatchObject({
      schedule: YEARLY,
      destination: 'hooks',
      selectedFields: { firstName: true, lastName: true },
    });
  });

  it('still names what is wrong: malformed extras, and an object the manifest does not declare', async () => {
    const { groupRef } = await connectGroup(stack);
    await expectInvalid(
      {
        groupRef,
        config: {
          content: {
            provider: 'sandboxApiKey',
            read: {
              objects: {
                contacts: {
                  ...fromComponents({}),
                  selectedValueMappings: { status: 'not a map' },
                  dynamicMappingsInput: [{ prompt: 'no mapToName' }],
                },
              },
            },
          },
        },
      },
      [
        'config.content.read.objects.contacts.selectedValueMappings.status',
        'config.content.read.objects.contacts.dynamicMappingsInput[0].mapToName',
      ],
    );
    // Nothing to fill from: an undeclared object still needs its schedule and destination.
    await expectInvalid(
      {
        groupRef,
        config: {
          content: {
            provider: 'sandboxApiKey',
            read: { objects: { leads: { objectName: 'leads', selectedFields: {} } } },
          },
        },
      },
      ['config.content.read.objects.leads.schedule', 'config.content.read.objects.leads.destination'],
    );
    expect(await installationCount(groupRef)).toBe(0);
  });
});

describe('the subscribe flag as the public installation config names it', () => {
  const subscribed = (flags: Record<string, boolean>) => ({
    provider: 'sandboxApiKey',
    subscribe: { objects: { contacts: { objectName: 'contacts', destination: 'hooks', ...flags } } },
  });
  const publicApi = new PublicApi();

  it('takes inheritFieldsAndMappings, or the manifest’s inheritFieldsAndMapping, and answers the public name, always', async () => {
    const cases: [Record<string, boolean>, boolean][] = [
      [{ inheritFieldsAndMappings: true }, true],
      [{ inheritFieldsAndMapping: true }, true],
      [{ inheritFieldsAndMappings: false, inheritFieldsAndMapping: false }, false],
      [{}, false],
    ];
    for (const [flags, inherits] of cases) {
      const { groupRef } = await connectGroup(stack);
      const created = await stack.api('POST', fixture.base, {
        body: { groupRef, config: { content: subscribed(flags) } },
      });
      expect(created.status).toBe(201);
      expect(created.body.config.content.subscribe.objects.contacts).toEqual({
        objectName: 'contacts',
        destination: 'hooks',
        inheritFieldsAndMappings: inherits,
      });
      expect(publicApi.checkResponse('api', 'POST', fixture.base, created)).toEqual([]);
      const got = await stack.api('GET', `${fixture.base}/${created.body.id}`);
      expect(got.body.config.content.subscribe.objects.contacts.inheritFieldsAndMappings).toBe(inherits);
    }
  });

  it('refuses the two names saying different things, by name', async () => {
    const { groupRef } = await connectGroup(stack);
    await expectInvalid(
      {
        groupRef,
        config: { content: subscribed({ inheritFieldsAndMappings: true, inheritFieldsAndMapping: false }) },
      },
      ['config.content.subscribe.objects.contacts.inheritFieldsAndMapping'],
    );
  });

  it('answers a config stored before, under the manifest’s name, with the public one', async () => {
    const { groupRef } = await connectGroup(stack);
    const created = await stack.api('POST', fixture.base, {
      body: { groupRef, config: { content: subscribed({ inheritFieldsAndMappings: true }) } },
    });
    await transaction(async (em) => {
      const config = await em.findOneOrFail(InstallationConfigEntity, { id: created.body.config.id });
      config.content = subscribed({ inheritFieldsAndMapping: true });
    });
    const got = await stack.api('GET', `${fixture.base}/${created.body.id}`);
    expect(got.body.config.content.subscribe.objects.contacts).toEqual({
      objectName: 'contacts',
      destination: 'hooks',
      inheritFieldsAndMappings: true,
    });
  });
});

describe('write defaults as the React components send them (selectedFieldSettings)', () => {
  const withWrite = (contacts: Record<string, unknown>) => ({
    ...configContent(),
    write: { objects: { contacts: { objectName: 'contacts', ...contacts } } },
  });

  it('are stored and returned; ifEmpty and a default with two values are refused by name', async () => {
    const { groupRef } = await connectGroup(stack);
    const selectedFieldSettings = {
      lastName: { default: { stringValue: 'Doe' }, writeOnCreate: 'always', writeOnUpdate: 'never' },
    };
    await expectInvalid(
      {
        groupRef,
        config: {
          content: withWrite({
            selectedFieldSettings: {
              lastName: { default: { stringValue: 'Doe' }, writeOnUpdate: 'ifEmpty' },
              firstName: { default: { stringValue: 'A', booleanValue: true } },
            },
          }),
        },
      },
      [
        'config.content.write.objects.contacts.selectedFieldSettings.lastName.writeOnUpdate',
        'config.content.write.objects.contacts.selectedFieldSettings.firstName.default',
      ],
    );
    const created = await install(stack, fixture, groupRef, withWrite({ selectedFieldSettings }));
    expect(created.config.content.write.objects.contacts).toEqual({
      objectName: 'contacts',
      selectedFieldSettings,
    });
  });
});

describe('with a project JWT minted for one group (the React components’ getToken)', () => {
  it('lists, creates, reads, updates and deletes that group’s installation, and no other group’s', async () => {
    const mint = await projectJwtMinter(stack);
    const { groupRef } = await connectGroup(stack);
    const other = await connectGroup(stack);
    const theirs = await install(stack, fixture, other.groupRef);
    const token = await mint({ groupRef, sub: 'ada' });
    const asGroup = (method: string, path: string, body?: unknown) =>
      request(method, `${stack.urls.api}${path}`, { bearer: token, body });

    const created = await asGroup('POST', fixture.base, { groupRef, config: { content: configContent() } });
    expect(created.status).toBe(201);
    expect(created.body.config.createdBy).toBe('consumer:ada');
    // Without a groupRef filter, the token sees its own group only.
    const listed = await asGroup('GET', fixture.base);
    expect(listed.body.map((installation: any) => installation.id)).toEqual([created.body.id]);
    const inProject = await asGroup('GET', `/projects/${stack.project.name}/installations`);
    expect(inProject.body.map((installation: any) => installation.id)).toEqual([created.body.id]);
    expect((await asGroup('GET', `${fixture.base}/${created.body.id}`)).status).toBe(200);
    const patch = {
      updateMask: ['config.content.read.objects.contacts.schedule'],
      installation: { config: { content: { read: { objects: { contacts: { schedule: '0 * * * *' } } } } } },
    };
    expect((await asGroup('PATCH', `${fixture.base}/${created.body.id}`, patch)).status).toBe(200);
    // It may credit a change to a consumer, as the components do, but not to the builder.
    const credited = (createdBy: string, schedule: string) => ({
      updateMask: ['config.createdBy', 'config.content.read.objects.contacts.schedule'],
      installation: { config: { createdBy, content: { read: { objects: { contacts: { schedule } } } } } },
    });
    const asConsumer = await asGroup(
      'PATCH',
      `${fixture.base}/${created.body.id}`,
      credited('consumer:ada', '30 * * * *'),
    );
    expect(asConsumer.body.config.createdBy).toBe('consumer:ada');
    const asBuilder = await asGroup(
      'PATCH',
      `${fixture.base}/${created.body.id}`,
      credited('builder:someone', '15 * * * *'),
    );
    expect(asBuilder.status).toBe(403);
    expect((await asGroup('GET', `${fixture.base}/${created.body.id}`)).body.config.id).toBe(
      asConsumer.body.config.id,
    );

    for (const [method, path, body] of [
      ['GET', `${fixture.base}?groupRef=${other.groupRef}`],
      ['GET', `/projects/${stack.project.name}/installations?groupRef=${other.groupRef}`],
      ['POST', fixture.base, { groupRef: other.groupRef, config: { content: configContent() } }],
      ['GET', `${fixture.base}/${theirs.id}`],
      ['PATCH', `${fixture.base}/${theirs.id}`, patch],
      ['DELETE', `${fixture.base}/${theirs.id}`],
    ] as const) {
      const refused = await asGroup(method, path, body);
      expect({ method, path, status: refused.status }).toEqual({ method, path, status: 403 });
      expect(refused.body.detail).toMatch(new RegExp(`acts for group "${groupRef}"`));
    }
    expect((await stack.api('GET', `${fixture.base}/${theirs.id}`)).body.config.id).toBe(theirs.config.id);

    expect((await asGroup('DELETE', `${fixture.base}/${created.body.id}`)).status).toBe(204);
    expect(await installationCount(groupRef)).toBe(0);
  });

  it('a project JWT naming no group acts for the whole project; a token of another project sees nothing', async () => {
    const mint = await projectJwtMinter(stack);
    const { groupRef } = await connectGroup(stack);
    const installed = await install(stack, fixture, groupRef);
    const server = await mint();
    const one = await request('GET', `${stack.urls.api}${fixture.base}?groupRef=${groupRef}`, {
      bearer: server,
    });
    expect(one.body.map((installation: any) => installation.id)).toEqual([installed.id]);

    const otherProject = await createTestProject();
    const foreign = await request('GET', `${stack.urls.api}/projects/${otherProject.id}/installations`, {
      bearer: await mint({ groupRef }),
    });
    expect(foreign.status).toBe(404);
  });
});
