import { Migration } from '@mikro-orm/migrations';

/** Notification topics and routes, project JWT keys and org invites. */
export class Migration20261121001000_notifications extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table topics (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        name text not null,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now(),
        unique (project_id, name)
      );
      create table event_topic_routes (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        event_type text not null,
        topic_id uuid not null references topics(id) on delete cascade deferrable initially deferred,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now(),
        unique (project_id, event_type, topic_id)
      );
      create index event_topic_routes_topic on event_topic_routes(topic_id);
      create table topic_destination_routes (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        topic_id uuid not null references topics(id) on delete cascade deferrable initially deferred,
        destination_id uuid not null references destinations(id) on delete cascade deferrable initially deferred,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now(),
        unique (topic_id, destination_id)
      );
      create index topic_destination_routes_destination on topic_destination_routes(destination_id);
      create table jwt_keys (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        label text not null,
        algorithm text not null,
        public_key_pem text not null,
        active boolean not null default true,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now()
      );
      create index jwt_keys_project on jwt_keys(project_id, create_time);
      create table invites (
        id uuid primary key,
        org_id uuid not null references orgs(id) on delete cascade deferrable initially deferred,
        invited_email text not null,
        status text not null,
        invited_by uuid not null references builders(id) on delete cascade deferrable initially deferred,
        accepted_by uuid references builders(id) on delete set null deferrable initially deferred,
        expire_time timestamptz not null,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now()
      );
      create index invites_org on invites(org_id, create_time desc);
      create index invites_email on invites(invited_email, create_time desc);
      -- One pending invite per address and org; expired ones are marked so before a new one is made.
      create unique index invites_one_pending on invites(org_id, invited_email) where status = 'pending';

      -- Wakes the outbox relay as soon as an event commits, instead of at its next poll.
      create function ferry_events_notify() returns trigger language plpgsql as $body$
      begin
        perform pg_notify('ferry_events', '');
        return null;
      end
      $body$;
      create trigger events_notify after insert on events
        for each statement execute function ferry_events_notify();
    `);
  }
}
