import Type, { type Static } from 'typebox';

/** What a connector can do; the API checks these to answer 422 before calling anything. */
export const ConnectorCapabilitiesSchema = Type.Object({
  read: Type.Boolean(),
  write: Type.Boolean(),
  delete: Type.Boolean(),
  objectMetadata: Type.Boolean(),
  customFields: Type.Boolean(),
  subscribe: Type.Boolean(),
  count: Type.Boolean(),
  /** Records matching equality filters (`support.search.operators.equals`). */
  search: Type.Boolean(),
  proxy: Type.Boolean(),
});
export type ConnectorCapabilities = Static<typeof ConnectorCapabilitiesSchema>;
export type Capability = keyof ConnectorCapabilities;
