import type { RouteDefinition } from './route.js';
import { apiKeyRoutes } from './api-keys.js';
import { integrationRoutes } from './integrations.js';
import { projectRoutes } from './projects.js';
import { providerRoutes } from './providers.js';

/** Every endpoint of every host. Add a resource's routes here. */
export function allRoutes(): RouteDefinition[] {
  return [...providerRoutes, ...projectRoutes, ...apiKeyRoutes, ...integrationRoutes];
}
