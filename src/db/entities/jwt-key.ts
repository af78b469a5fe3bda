import { EntitySchema } from '@mikro-orm/core';
import { timestamps, uuidColumn, uuidPrimaryKey } from '../columns.js';

/**
 * The public half of a key the builder's backend signs project bearer tokens with. Only public keys
 * are stored, so nothing here is secret.
 */
export interface JwtKey {
  id: string;
  projectId: string;
  label: string;
  algorithm: 'RSA';
  publicKeyPem: string;
  active: boolean;
  /** When set, tokens must name it in their `aud` claim. */
  audience?: string | null;
  /** When set, tokens must carry it as their `iss` claim. */
  issuer?: string | null;
  createTime: Date;
  updateTime: Date;
}

export const JwtKeyEntity = new EntitySchema<JwtKey>({
  name: 'JwtKey',
  tableName: 'jwt_keys',
  properties: {
    id: uuidPrimaryKey,
    projectId: uuidColumn,
    label: { type: 'string' },
    algorithm: { type: 'string' },
    publicKeyPem: { type: 'text' },
    active: { type: 'boolean' },
    audience: { type: 'text', nullable: true },
    issuer: { type: 'text', nullable: true },
    ...timestamps,
  },
});
