import type { PlainMessage } from './ferry-processes.js';

/** What every far side is (bench/support/far-side.ts opens them). */

export interface Landed {
  /** The message id as the far side holds it (AMQP messageId, Nats-Msg-Id, the row's message_id…). */
  messageId: string;
  recordIds: string[];
}

export interface FarSide {
  type: string;
  /** The destination's create body: `type`, `metadata`, `secrets`. */
  destination: Record<string, unknown>;
  /** Sends one message and waits for the server to take it, as a plain program would. */
  send(message: PlainMessage): Promise<void>;
  /** Everything that landed so far (cumulative: a queue drained earlier keeps what it gave). */
  landed(): Promise<Landed[]>;
  /** Makes the bucket, queue or stream again after its server restarted empty (moto). */
  recreate?(): Promise<void>;
  close(): Promise<void>;
}

/** The ids of the records in a read message (`result[].raw.id`). */
export function recordIdsOf(body: string | Buffer): string[] {
  const parsed = JSON.parse(body.toString()) as { result?: { raw?: { id?: unknown } }[] };
  return (parsed.result ?? []).map((entry) => String(entry.raw?.id));
}
