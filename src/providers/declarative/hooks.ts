import type {
  CountInput,
  IncomingProviderEvent,
  ReadPageInput,
  ReadPageResult,
  SearchInput,
  SearchPageResult,
  SubscribeInput,
  Subscription,
  WriteInput,
  WriteResult,
} from '../connector.js';
import type { ProviderError } from '../errors.js';
import type {
  CustomFieldDefinition,
  ObjectMetadata,
  UpsertCustomFieldsResult,
} from '../../schemas/object-metadata.js';
import type { HookContext } from './context.js';

/**
 * Code for one provider's quirks, beside its declaration. Each hook receives the declared behaviour
 * (`declared`) so it can wrap it or fall back on it; a capability a declaration names under
 * `hooks.capabilities` is the hook's alone (custom fields, subscriptions).
 */
export interface ConnectorHooks {
  readPage?(
    connector: HookContext,
    input: ReadPageInput,
    declared: () => Promise<ReadPageResult>,
  ): Promise<ReadPageResult>;
  search?(
    connector: HookContext,
    input: SearchInput,
    declared: () => Promise<SearchPageResult>,
  ): Promise<SearchPageResult>;
  write?(
    connector: HookContext,
    input: WriteInput,
    declared: () => Promise<WriteResult>,
  ): Promise<WriteResult>;
  listObjectMetadata?(
    connector: HookContext,
    objectName: string,
    declared: () => Promise<ObjectMetadata>,
  ): Promise<ObjectMetadata>;
  estimateCount?(connector: HookContext, input: CountInput): Promise<number | undefined>;
  upsertCustomFields?(
    connector: HookContext,
    objectName: string,
    fields: CustomFieldDefinition[],
  ): Promise<UpsertCustomFieldsResult>;
  subscribe?(connector: HookContext, input: SubscribeInput): Promise<Subscription>;
  updateSubscription?(
    connector: HookContext,
    subscriptionId: string,
    input: SubscribeInput,
  ): Promise<Subscription>;
  deleteSubscription?(connector: HookContext, subscriptionId: string): Promise<void>;
  verifyWebhook?(
    connector: HookContext,
    headers: Record<string, string | string[] | undefined>,
    rawBody: string | Buffer,
    secret: string,
  ): IncomingProviderEvent[];
  /** A provider failure said more clearly (HubSpot's "unable to infer object type" is a 404). */
  providerError?(connector: HookContext, objectName: string, error: ProviderError): ProviderError;
}
