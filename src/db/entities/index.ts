import { ConnectionSchema, ConsumerSchema, GroupSchema, ProviderAppSchema } from './connection.js';
import { NotificationEventSchema } from './event.js';
import { InstallationConfigSchema, InstallationSchema, ReadWatermarkSchema } from './installation.js';
import { DestinationSchema, OperationLogSchema, OperationSchema } from './operation.js';
import { IntegrationSchema, RevisionSchema } from './integration.js';
import { BuilderSchema, OrgMembershipSchema, OrgSchema } from './org.js';
import { ApiKeySchema, ProjectSchema } from './project.js';

/** Every entity MikroORM knows; add new ones here. */
export const entities = [
  OrgSchema,
  BuilderSchema,
  OrgMembershipSchema,
  ProjectSchema,
  ApiKeySchema,
  IntegrationSchema,
  RevisionSchema,
  NotificationEventSchema,
  GroupSchema,
  ConsumerSchema,
  ProviderAppSchema,
  ConnectionSchema,
  InstallationSchema,
  InstallationConfigSchema,
  ReadWatermarkSchema,
  DestinationSchema,
  OperationSchema,
  OperationLogSchema,
];
