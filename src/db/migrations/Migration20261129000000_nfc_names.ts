import { Migration } from '@mikro-orm/migrations';

/** Each unique name column, with the columns its uniqueness is scoped by and the rows it covers. */
const uniqueNames = [
  { table: 'topics', column: 'name', scope: ['project_id'], where: 'true' },
  { table: 'integrations', column: 'name', scope: ['project_id'], where: 'true' },
  { table: 'groups', column: 'group_ref', scope: ['project_id'], where: 'true' },
  { table: 'consumers', column: 'consumer_ref', scope: ['project_id'], where: 'true' },
  { table: 'projects', column: 'name', scope: [], where: 'true' },
  { table: 'builders', column: 'email', scope: [], where: 'true' },
  { table: 'invites', column: 'invited_email', scope: ['org_id'], where: "status = 'pending'" },
];

/**
 * Unique names are compared in Unicode NFC from now on (src/core/names.ts): names stored in another
 * form are rewritten in NFC, so they are found by the name as the API now reads it. Where two
 * stored names are one in NFC (`café` composed and decomposed), the one already in NFC, else the
 * oldest, takes the name; the others keep theirs, reachable by id. Integrations' latest revisions
 * follow their integration's name. PostgreSQL normalises only in a UTF-8 database.
 */
export function nfcNamesSql(): string {
  const statements = uniqueNames.map(({ table, column, scope, where }) => {
    const partition = [...scope, `normalize(${column}, NFC)`].join(', ');
    return `
        with ranked as (
          select id, normalize(${column}, NFC) as canonical,
                 row_number() over (partition by ${partition}
                                    order by ${column} is nfc normalized desc, create_time, id) as rank
          from ${table} where ${where}
        )
        update ${table} t set ${column} = ranked.canonical, update_time = now()
        from ranked
        where t.id = ranked.id and ranked.rank = 1 and t.${column} <> ranked.canonical;`;
  });
  return `
      do $$
      begin
        if current_setting('server_encoding') = 'UTF8' then
          ${statements.join('\n')}
          update revisions r set content = jsonb_set(r.content, '{name}', to_jsonb(i.name))
          from integrations i
          where r.id = i.latest_revision_id and r.content ->> 'name' <> i.name
            and normalize(r.content ->> 'name', NFC) = i.name;
        end if;
      end
      $$;`;
}

export class Migration20261129000000_nfc_names extends Migration {
  override async up(): Promise<void> {
    this.addSql(nfcNamesSql());
  }
}
