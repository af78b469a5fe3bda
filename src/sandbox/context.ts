import type { CursorCodec } from './cursor.js';
import type { Generator } from './data.js';
import type { FaultController } from './faults.js';
import type { IdempotentCreates } from './idempotency.js';
import type { ObjectSchemas } from './schema.js';
import type { RecordStore } from './store.js';
import type { OAuthStore } from './tokens.js';
import type { WebhookDispatcher } from './webhooks.js';

/** The parts of one running sandbox, handed to each router. */
export interface SandboxContext {
  generator: Generator;
  schemas: ObjectSchemas;
  store: RecordStore;
  /** Creates sent with an `Idempotency-Key`, replayed rather than repeated. */
  idempotentCreates: IdempotentCreates;
  cursors: CursorCodec;
  oauth: OAuthStore;
  faults: FaultController;
  webhooks: WebhookDispatcher;
  apiKeys: Set<string>;
  /** Base URL as clients reach it (publicUrl option, else the listening address). */
  publicUrl(): string;
  /** Unexpected errors (sandbox bugs); the client only sees a 500. */
  reportError(error: unknown): void;
}
