import { EntitySchema } from '@mikro-orm/core';
import { timestamps, uuidColumn, uuidPrimaryKey } from '../columns.js';

export interface Org {
  id: string;
  name: string;
  createTime: Date;
  updateTime: Date;
}

export const OrgEntity = new EntitySchema<Org>({
  name: 'Org',
  tableName: 'orgs',
  properties: { id: uuidPrimaryKey, name: { type: 'string' }, ...timestamps },
});

/** A builder is a person who signs in with a Ferry-issued bearer token. */
export interface Builder {
  id: string;
  email: string;
  name?: string;
  createTime: Date;
  updateTime: Date;
}

export const BuilderEntity = new EntitySchema<Builder>({
  name: 'Builder',
  tableName: 'builders',
  properties: {
    id: uuidPrimaryKey,
    email: { type: 'string', unique: true },
    name: { type: 'string', nullable: true },
    ...timestamps,
  },
});

export interface OrgMembership {
  id: string;
  orgId: string;
  builderId: string;
  role: 'owner' | 'member';
  createTime: Date;
  updateTime: Date;
}

export const OrgMembershipEntity = new EntitySchema<OrgMembership>({
  name: 'OrgMembership',
  tableName: 'org_memberships',
  properties: {
    id: uuidPrimaryKey,
    orgId: uuidColumn,
    builderId: uuidColumn,
    role: { type: 'string' },
    ...timestamps,
  },
});
