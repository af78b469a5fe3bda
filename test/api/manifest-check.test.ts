import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDestinations, startTestStack, type TestStack } from '../support/stack.js';

/**
 * `integrations:check`: what a deploy would say of a manifest, with nothing deployed. Every error
 * in one pass, in the order of the text, each on the line the author wrote it and said once; names
 * a deep connector does not know are warnings of a manifest that may still be deployed.
 */

let stack: TestStack;
let path: string;

beforeAll(async () => {
  stack = await startTestStack();
  await createDestinations(stack, ['records']);
  path = `/projects/${stack.project.id}/integrations:check`;
});
afterAll(() => stack?.close());

const detailsOf = (body: { issues?: { detail: string }[] }) =>
  (body.issues ?? []).map((issue) => issue.detail);

describe('integrations:check', () => {
  it('reports a typo once, on its own line, with the name meant', async () => {
    const sourceYaml = [
      'specVersion: 1.0.0', //                       1
      'integrations:', //                            2
      '  - name: crm', //                            3
      '    provider: sandboxApiKey', //              4
      '    read:', //                                5
      '      objects:', //                           6
      '        - objectName: contacts', //           7
      '          destination: records', //          8
      '          schedule: "*/30 * * * *"', //       9
      '          requiredFields:', //                10
      '            - fieldNme: email', //            11
    ].join('\n');
    const answer = await stack.api('POST', path, { body: { sourceYaml } });
    expect(answer.status).toBe(400);
    expect(detailsOf(answer.body)).toEqual([
      'line 11, column 15: integrations[0].read.objects[0].requiredFields[0].fieldNme is not an allowed property; did you mean fieldName?',
    ]);
  });

  it('reports every error of a manifest in one pass, in the order of the text', async () => {
    const sourceYaml = [
      'specVersion: 1.0.0',
      'integrations:',
      '  - name: crm',
      '    provider: sandboxApiKey',
      '    read:',
      '      objects:',
      '        - objectName: contacts',
      '          destination: records',
      '          schedule: "every hour"', // 9: a content error in a well-formed integration
      '  - name: crm-two',
      '    provider: sandboxApiKey',
      '    read:',
      '      objects:',
      '        - objectName: contacts',
      '          destination: records',
      '          shedule: "*/5 * * * *"', // 16: a shape error in another
    ].join('\n');
    const answer = await stack.api('POST', path, { body: { sourceYaml } });
    expect(answer.status).toBe(400);
    const details = detailsOf(answer.body);
    expect(details).toHaveLength(2);
    expect(details[0]).toMatch(
      /^line 9, column 21: integrations\[0\]\.read\.objects\[0\]\.schedule .*every hour/,
    );
    expect(details[1]).toMatch(
      /^line 16, column 11: integrations\[1\]\.read\.objects\[0\]\.shedule is not an allowed property/,
    );
  });

  it('warns of objects and fields a deep connector does not know, and deploys nothing', async () => {
    const sourceYaml = [
      'specVersion: 1.0.0',
      'integrations:',
      '  - name: crm-check',
      '    provider: sandboxApiKey',
      '    read:',
      '      objects:',
      '        - objectName: contatcs', // 7
      '          destination: records',
      "          schedule: '0 * * * *'",
      '  - name: issues-check',
      '    provider: github',
      '    read:',
      '      objects:',
      '        - objectName: issues',
      '          destination: records',
      "          schedule: '0 * * * *'",
      '          requiredFields:',
      '            - fieldName: titel', // 18
      '            - fieldName: state',
      '  - name: other-check',
      '    provider: typeform', // no deep connector: nothing is known, nothing is said
      '    proxy:',
      '      enabled: true',
    ].join('\n');
    const answer = await stack.api('POST', path, { body: { sourceYaml } });
    expect(answer.status).toBe(200);
    expect(answer.body.integrations).toEqual([
      { name: 'crm-check', provider: 'sandboxApiKey' },
      { name: 'issues-check', provider: 'github' },
      { name: 'other-check', provider: 'typeform' },
    ]);
    expect(answer.body.warnings.map((warning: { detail: string }) => warning.detail)).toEqual([
      'line 7, column 23: integrations[0].read.objects[0].objectName "contatcs" is not an object the sandboxApiKey connector knows; did you mean contacts?',
      'line 18, column 26: integrations[1].read.objects[0].requiredFields[0].fieldName "titel" is not a field of issues the github connector knows; did you mean title?',
    ]);
    const listed = await stack.api('GET', `/projects/${stack.project.id}/integrations`);
    expect(listed.body.map((integration: { name: string }) => integration.name)).not.toContain('crm-check');
  });

  it('answers a valid manifest of known names with no warnings', async () => {
    const sourceYaml =
      'specVersion: 1.0.0\nintegrations:\n  - name: ok\n    provider: sandboxApiKey\n    read:\n      objects:\n        - objectName: contacts\n          destination: records\n          schedule: "0 * * * *"\n';
    const answer = await stack.api('POST', path, { body: { sourceYaml } });
    expect(answer.status).toBe(200);
    expect(answer.body.warnings).toEqual([]);
  });

  it('names a destination the project does not have on its line, as a deploy would', async () => {
    const sourceYaml = [
      'specVersion: 1.0.0',
      'integrations:',
      '  - name: crm-missing',
      '    provider: sandboxApiKey',
      '    read:',
      '      objects:',
      '        - objectName: contacts',
      '          destination: nowhere', // 8
      "          schedule: '0 * * * *'",
    ].join('\n');
    const answer = await stack.api('POST', path, { body: { sourceYaml } });
    expect(answer.status).toBe(400);
    expect(detailsOf(answer.body)).toEqual([
      'line 8, column 24: integrations[0].read.objects[0].destination names destination "nowhere", which does not exist in this project; create it first',
    ]);
  });

  it('refuses what is not a manifest, and callers without a key', async () => {
    const empty = await stack.api('POST', path, { body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.issues[0].name).toBe('sourceYaml');
    const notYaml = await stack.api('POST', path, { body: { sourceYaml: 'a: [' } });
    expect(notYaml.status).toBe(400);
    expect(detailsOf(notYaml.body)[0]).toMatch(/^YAML error at line 1/);
    const anonymous = await fetch(`${stack.urls.api}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sourceYaml: 'specVersion: 1.0.0\nintegrations: []\n' }),
    });
    expect(anonymous.status).toBe(401);
  });
});
