import type { AnyRoute } from './route.js';
import { apiKeyRoutes } from './api-keys.js';
import { destinationRoutes } from './destinations.js';
import { operationRoutes } from './operations.js';
import { readRoutes } from './reads.js';
import { integrationRoutes } from './integrations.js';
import { installationRoutes } from './installations.js';
import { projectRoutes } from './projects.js';
import { providerRoutes } from './providers.js';
import { topicRoutes } from './topics.js';
import { notificationRouteRoutes } from './notification-routes.js';
import { topicDestinationRouteRoutes } from './topic-destination-routes.js';
import { eventRoutes } from './events.js';
import { jwtKeyRoutes } from './jwt-keys.js';
import { orgRoutes } from './orgs.js';
import { inviteRoutes } from './invites.js';
import { builderRoutes } from './builders.js';
import { hostedOnlyRoutes } from './hosted-only.js';
import { providerAppRoutes } from './provider-apps.js';
import { oauthRoutes } from './oauth.js';
import { connectionRoutes } from './connections.js';
import { customAuthRoutes } from './custom-auth.js';
import { objectMetadataRoutes } from './object-metadata.js';
import { hydrateRoutes } from './hydrate.js';
import { writeRoutes } from './write.js';
import { searchRoutes } from './search.js';
import { providerWebhookRoutes } from './provider-webhooks.js';
import { consoleViewRoutes } from './console-views.js';

/** Every endpoint of every host. Add a resource's routes here. */
export function allRoutes(): AnyRoute[] {
  return [
    ...providerRoutes,
    ...projectRoutes,
    ...apiKeyRoutes,
    ...integrationRoutes,
    ...installationRoutes,
    ...destinationRoutes,
    ...operationRoutes,
    ...readRoutes,
    ...topicRoutes,
    ...notificationRouteRoutes,
    ...topicDestinationRouteRoutes,
    ...eventRoutes,
    ...jwtKeyRoutes,
    ...orgRoutes,
    ...inviteRoutes,
    ...builderRoutes,
    ...providerAppRoutes,
    // Before connectionRoutes: `connections/{id}:oauth-update` must win over `connections/{id}`.
    ...oauthRoutes,
    ...connectionRoutes,
    ...customAuthRoutes,
    ...objectMetadataRoutes,
    ...hydrateRoutes,
    ...writeRoutes,
    ...searchRoutes,
    ...providerWebhookRoutes,
    ...consoleViewRoutes,
    ...hostedOnlyRoutes,
  ];
}
