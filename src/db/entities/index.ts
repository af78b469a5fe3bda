import { ConnectionSchema, ConsumerSchema, GroupSchema, ProviderAppSchema } from './connection.js';
import { NotificationEventSchema } from './event.js';
import { OAuthStateSchema } from './oauth-state.js';
import { InstallationConfigSchema, InstallationSchema, ReadWatermarkSchema } from './installation.js';
import { DestinationSchema, OperationLogSchema, OperationSchema } from './operation.js';
import { IntegrationSchema, RevisionSchema } from './integration.js';
import { BuilderSchema, OrgMembershipSchema, OrgSchema } from './org.js';
import { ApiKeySchema, ProjectSchema } from './project.js';
import { EventTopicRouteSchema, TopicDestinationRouteSchema, TopicSchema } from './notification.js';
import { JwtKeySchema } from './jwt-key.js';
import { InviteSchema } from './invite.js';
import { SubscriptionSchema } from './subscription.js';

import { DeliveryAttemptSchema } from './delivery.js';
import { ReadCheckpointSchema } from './read-checkpoint.js';
import { DeliveryCreditSchema, StoredPageSchema } from './stored-page.js';

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
  TopicSchema,
  EventTopicRouteSchema,
  TopicDestinationRouteSchema,
  JwtKeySchema,
  InviteSchema,
  DeliveryAttemptSchema,
  ReadCheckpointSchema,
  StoredPageSchema,
  DeliveryCreditSchema,
  SubscriptionSchema,
  OAuthStateSchema,
];
