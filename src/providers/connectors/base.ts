import type {
  Connector,
  ConnectorOptions,
  CountInput,
  IncomingProviderEvent,
  ProxyRequest,
  ProxyResponse,
  ReadPageInput,
  ReadPageResult,
  SubscribeInput,
  Subscription,
  WriteInput,
  WriteResult,
} from '../connector.js';
import type { Capability, ConnectorCapabilities } from '../../schemas/capabilities.js';
import type {
  CustomFieldDefinition,
  ObjectMetadata,
  UpsertCustomFieldsResult,
} from '../../schemas/object-metadata.js';
import type { ConnectionTarget } from '../auth-material.js';
import { getProvider, type Provider } from '../catalog/index.js';
import { CapabilityNotSupportedError, ConnectorInputError } from '../errors.js';
import { ProviderHttpClient, type HttpMethod } from '../http.js';

export const noCapabilities: ConnectorCapabilities = {
  read: false,
  write: false,
  delete: false,
  objectMetadata: false,
  customFields: false,
  subscribe: false,
  count: false,
  proxy: false,
};

/** Headers a proxied request must not pass on: hop-by-hop ones and the caller's own credentials. */
const unforwardedHeaders = new Set([
  'authorization',
  'connection',
  'content-length',
  'cookie',
  'host',
  'keep-alive',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'x-api-key',
]);

const proxyMethods = new Set<string>(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * What every connector shares: the provider's catalog entry, an authenticated HTTP client, the
 * proxy, and "not supported" answers for every capability a subclass does not implement.
 */
export abstract class BaseConnector implements Connector {
  readonly provider: string;
  abstract readonly capabilities: Readonly<ConnectorCapabilities>;
  protected readonly catalog: Provider;
  protected readonly http: ProviderHttpClient;

  constructor(target: ConnectionTarget, options: ConnectorOptions = {}) {
    const catalog = getProvider(target.provider);
    if (!catalog) throw new Error(`Provider "${target.provider}" is not in Ferry's catalog.`);
    this.provider = catalog.name;
    this.catalog = catalog;
    this.http = new ProviderHttpClient(catalog, target, {
      onRequest: options.onRequest,
      baseUrl: options.baseUrl,
      retry: options.retry,
      timeoutMs: options.timeoutMs,
    });
  }

  protected unsupported(capability: Capability | string, detail?: string): CapabilityNotSupportedError {
    return new CapabilityNotSupportedError(this.provider, capability, detail);
  }

  /** The id an update or delete targets: `recordId`, else `record.id` (updates only). */
  protected targetRecordId(input: WriteInput): string {
    const fromRecord = input.type === 'update' ? input.record?.id : undefined;
    const id =
      input.recordId ??
      (typeof fromRecord === 'string' || typeof fromRecord === 'number' ? String(fromRecord) : undefined);
    if (!id) {
      throw new ConnectorInputError(
        `A ${input.type} of ${input.objectName} needs the record id.`,
        this.provider,
      );
    }
    return id;
  }

  /** The field values of a create or update, without the id (which is addressed by the URL). */
  protected writeValues(input: WriteInput): Record<string, unknown> {
    if (!input.record || typeof input.record !== 'object') {
      throw new ConnectorInputError(`A ${input.type} of ${input.objectName} needs a record.`, this.provider);
    }
    const { id: _id, ...values } = input.record;
    return input.type === 'update' ? values : input.record;
  }

  async readPage(_input: ReadPageInput): Promise<ReadPageResult> {
    throw this.unsupported('read');
  }

  async write(input: WriteInput): Promise<WriteResult> {
    throw this.unsupported(input.type === 'delete' ? 'delete' : 'write');
  }

  async listObjectMetadata(_objectName: string): Promise<ObjectMetadata> {
    throw this.unsupported('objectMetadata');
  }

  async upsertCustomFields(
    _objectName: string,
    _fields: CustomFieldDefinition[],
  ): Promise<UpsertCustomFieldsResult> {
    throw this.unsupported('customFields');
  }

  async subscribe(_input: SubscribeInput): Promise<Subscription> {
    throw this.unsupported('subscribe');
  }

  async updateSubscription(_subscriptionId: string, _input: SubscribeInput): Promise<Subscription> {
    throw this.unsupported('subscribe');
  }

  async deleteSubscription(_subscriptionId: string): Promise<void> {
    throw this.unsupported('subscribe');
  }

  verifyWebhook(
    _headers: Record<string, string | string[] | undefined>,
    _rawBody: string | Buffer,
    _secret: string,
  ): IncomingProviderEvent[] {
    throw this.unsupported('subscribe');
  }

  async estimateCount(_input: CountInput): Promise<number | undefined> {
    return undefined;
  }

  async proxy(request: ProxyRequest): Promise<ProxyResponse> {
    if (!this.capabilities.proxy) throw this.unsupported('proxy');
    const method = request.method.toUpperCase();
    if (!proxyMethods.has(method)) throw this.unsupported('proxy', `Method ${method} cannot be proxied.`);
    if (
      /^[a-z][a-z0-9+.-]*:/i.test(request.path) ||
      request.path.startsWith('//') ||
      /(^|\/)\.\.(\/|\?|$)/.test(request.path)
    ) {
      // The path is appended to the provider's base URL; an absolute URL would send credentials elsewhere.
      throw this.unsupported('proxy', 'A proxied path must be relative to the provider’s base URL.');
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers ?? {}).filter(([name]) => !unforwardedHeaders.has(name.toLowerCase())),
    );
    const response = await this.http.send({
      method: method as HttpMethod,
      path: `${request.path.startsWith('/') ? '' : '/'}${request.path}`,
      headers,
      body: request.body,
    });
    return { status: response.status, headers: response.headers, body: response.rawBody };
  }
}
