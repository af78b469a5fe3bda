import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { closeOrm, transaction } from '../../src/db/orm.js';
import { nfcNamesSql } from '../../src/db/migrations/Migration20261129000000_nfc_names.js';
import { createTestProject } from '../support/stack.js';

/**
 * Names stored before the API compared them in NFC are rewritten in NFC by the migration, so the
 * API finds them by name; where two stored names are one in NFC, neither is lost.
 */

afterAll(() => closeOrm());

const sql = <T = Record<string, unknown>>(query: string, params: unknown[] = []) =>
  transaction((em) => em.execute<T[]>(query, params));

const composed = (word: string) => word.normalize('NFC');
const decomposed = (word: string) => word.normalize('NFD');

describe('the NFC names migration', () => {
  it('rewrites names in NFC, keeps the older of two that are one in NFC, and renames integrations whole', async () => {
    const { id: projectId } = await createTestProject();
    const topic = async (name: string, age: string) => {
      const id = randomUUID();
      await sql(
        `insert into topics (id, project_id, name, create_time) values (?, ?, ?, now() - ?::interval)`,
        [id, projectId, name, age],
      );
      return id;
    };
    const alone = await topic(decomposed('über'), '3 days');
    const olderDecomposed = await topic(decomposed('café'), '2 days');
    const newerComposed = await topic(composed('café'), '1 day');
    // Two spellings, neither in NFC, of one name (the marks in either order): the older takes it.
    const [olderTwin, newerTwin] = [
      await topic('a\u0328\u0301', '2 days'),
      await topic('a\u0301\u0328', '1 day'),
    ];
    const project = { id: randomUUID(), name: decomposed(`Zoë-${randomUUID().slice(0, 8)}`) };
    await sql(
      `insert into projects (id, org_id, name, app_name) select ?, org_id, ?, 'app' from projects where id = ?`,
      [project.id, project.name, projectId],
    );
    const groupId = randomUUID();
    await sql(`insert into groups (id, project_id, group_ref, group_name) values (?, ?, ?, 'g')`, [
      groupId,
      projectId,
      decomposed('Société'),
    ]);
    const [integrationId, revisionId] = [randomUUID(), randomUUID()];
    await sql(
      `insert into integrations (id, project_id, name, provider, latest_revision_id) values (?, ?, ?, 'sandbox', ?)`,
      [integrationId, projectId, decomposed('crème'), revisionId],
    );
    await sql(
      `insert into revisions (id, project_id, integration_id, spec_version, content) values (?, ?, ?, '1.0.0', ?)`,
      [
        revisionId,
        projectId,
        integrationId,
        JSON.stringify({ name: decomposed('crème'), provider: 'sandbox' }),
      ],
    );

    await sql(nfcNamesSql());

    const names = Object.fromEntries(
      (
        await sql<{ id: string; name: string }>(`select id, name from topics where project_id = ?`, [
          projectId,
        ])
      ).map((row) => [row.id, row.name]),
    );
    expect(names[alone]).toBe(composed('über'));
    // The one already in NFC keeps the name; the other keeps its own, reachable by id.
    expect(names[newerComposed]).toBe(composed('café'));
    expect(names[olderDecomposed]).toBe(decomposed('café'));
    expect(names[olderTwin]).toBe('\u0105\u0301');
    expect(names[newerTwin]).toBe('a\u0301\u0328');
    const [renamed] = await sql<{ name: string }>(`select name from projects where id = ?`, [project.id]);
    expect(renamed.name).toBe(composed(project.name));
    const [group] = await sql<{ group_ref: string }>(`select group_ref from groups where id = ?`, [groupId]);
    expect(group.group_ref).toBe(composed('Société'));
    const [integration] = await sql<{ name: string; content_name: string }>(
      `select i.name, r.content ->> 'name' as content_name from integrations i join revisions r on r.id = i.latest_revision_id where i.id = ?`,
      [integrationId],
    );
    expect(integration).toEqual({ name: composed('crème'), content_name: composed('crème') });
  });
});
