import { ConnectionEntity, ConsumerEntity, GroupEntity, ProviderAppEntity } from './connection.js';
import { NotificationEventEntity } from './event.js';
import { OAuthStateEntity } from './oauth-state.js';
import { InstallationConfigEntity, InstallationEntity, ReadWatermarkEntity } from './installation.js';
import { DestinationEntity, OperationLogEntity, OperationEntity } from './operation.js';
import { DeployedManifestEntity, IntegrationEntity, RevisionEntity } from './integration.js';
import { BuilderEntity, OrgMembershipEntity, OrgEntity } from './org.js';
import { ApiKeyEntity, ProjectEntity } from './project.js';
import { EventTopicRouteEntity, TopicDestinationRouteEntity, TopicEntity } from './notification.js';
import { JwtKeyEntity } from './jwt-key.js';
import { InviteEntity } from './invite.js';
import { SubscriptionEntity } from './subscription.js';
import { SubscriptionEventEntity } from './subscription-event.js';
import { SchemaSnapshotEntity, SchemaWatchMessageEntity } from './schema-watch.js';

import { DeliveryAttemptEntity } from './delivery.js';
import { ReadCheckpointEntity } from './read-checkpoint.js';
import { DeliveryCreditEntity, StoredPageEntity } from './stored-page.js';

/** Every entity MikroORM knows; add new ones here. */
export const entities = [
  OrgEntity,
  BuilderEntity,
  OrgMembershipEntity,
  ProjectEntity,
  ApiKeyEntity,
  IntegrationEntity,
  RevisionEntity,
  DeployedManifestEntity,
  NotificationEventEntity,
  GroupEntity,
  ConsumerEntity,
  ProviderAppEntity,
  ConnectionEntity,
  InstallationEntity,
  InstallationConfigEntity,
  ReadWatermarkEntity,
  DestinationEntity,
  OperationEntity,
  OperationLogEntity,
  TopicEntity,
  EventTopicRouteEntity,
  TopicDestinationRouteEntity,
  JwtKeyEntity,
  InviteEntity,
  DeliveryAttemptEntity,
  ReadCheckpointEntity,
  StoredPageEntity,
  DeliveryCreditEntity,
  SubscriptionEntity,
  SubscriptionEventEntity,
  OAuthStateEntity,
  SchemaSnapshotEntity,
  SchemaWatchMessageEntity,
];
