import { EntitySchema } from '@mikro-orm/core';
import { timestampColumn, timestamps, uuidColumn, uuidPrimaryKey } from '../columns.js';

export type InviteStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

/**
 * An invitation for an email address to join an org. A pending invite past `expireTime` is
 * expired even before a write records it so (see src/domain/invites.ts).
 */
export interface Invite {
  id: string;
  orgId: string;
  invitedEmail: string;
  status: InviteStatus;
  invitedBy: string;
  acceptedBy?: string;
  expireTime: Date;
  createTime: Date;
  updateTime: Date;
}

export const InviteEntity = new EntitySchema<Invite>({
  name: 'Invite',
  tableName: 'invites',
  properties: {
    id: uuidPrimaryKey,
    orgId: uuidColumn,
    invitedEmail: { type: 'string' },
    status: { type: 'string' },
    invitedBy: uuidColumn,
    acceptedBy: { ...uuidColumn, nullable: true },
    expireTime: timestampColumn,
    ...timestamps,
  },
});
