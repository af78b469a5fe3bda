import type { EntitySchemaProperty } from '@mikro-orm/core';

/**
 * Column definitions shared by every entity, so each schema lists only what is its own.
 * Entities declare no relations: foreign keys are checked at commit (deferrable), so the unit of
 * work may insert in any order.
 */
export const uuidPrimaryKey = { type: 'uuid', primary: true } as const;
export const uuidColumn = { type: 'uuid' } as const;
export const timestampColumn = { type: 'Date', columnType: 'timestamptz' } as const;
export const jsonColumn = { type: 'json' } as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Property = EntitySchemaProperty<any, any>;

export const timestamps = {
  createTime: { ...timestampColumn, onCreate: () => new Date() },
  updateTime: { ...timestampColumn, onCreate: () => new Date(), onUpdate: () => new Date() },
} as const;
