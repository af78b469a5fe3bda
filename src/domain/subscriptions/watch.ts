import type { IncomingProviderEvent } from '../../providers/connector.js';
import type { SubscribeConfig } from '../../schemas/installations.js';

/** A provider event as Ferry names it in subscribe messages (COMPAT: `subscribeEventType`). */
export type SubscribeEventType = 'create' | 'update' | 'delete' | 'associationUpdate' | 'other';

/**
 * Why the installation's subscribe config does not deliver this event, or undefined when it does.
 * - create, update, delete: when the config names that event (all three when it names none);
 * - an update with `requiredWatchFields` (groups of field names): only when every field of some
 *   group changed, where the provider says which changed; `watchFieldsAuto: all` takes any update;
 * - association changes: with `associationChangeEvent`; other events: named in `otherEvents`.
 */
export function unwatchedReason(config: SubscribeConfig, event: IncomingProviderEvent): string | undefined {
  const type = event.eventType as SubscribeEventType;
  if (type === 'other') {
    const named = (config.otherEvents ?? []).flat();
    return named.includes(event.providerEventType)
      ? undefined
      : `"${event.providerEventType}" is not among the subscribed otherEvents`;
  }
  if (type === 'associationUpdate') {
    return config.associationChangeEvent ? undefined : 'association changes are not subscribed';
  }
  const namesAny = config.createEvent || config.updateEvent || config.deleteEvent;
  const subscribed = { create: config.createEvent, update: config.updateEvent, delete: config.deleteEvent }[
    type
  ];
  if (namesAny && !subscribed) return `${type} events are not subscribed`;
  if (type !== 'update' || !config.updateEvent || config.updateEvent.watchFieldsAuto === 'all')
    return undefined;
  const groups = config.updateEvent.requiredWatchFields ?? [];
  if (!groups.length || !event.fieldsUpdated) return undefined;
  const changed = new Set(event.fieldsUpdated.map((name) => name.toLowerCase()));
  const watched = groups.some((group) => group.every((name) => changed.has(name.toLowerCase())));
  return watched
    ? undefined
    : `none of the watched fields changed (changed: ${event.fieldsUpdated.join(', ') || 'none'})`;
}
