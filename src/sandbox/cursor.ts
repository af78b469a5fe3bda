import { createHmac, timingSafeEqual } from 'node:crypto';
import { validationError } from './errors.js';
import type { ObjectName } from './schema.js';
import type { FieldEquals, ListKey } from './store.js';

/** Everything needed to resume a listing: the last key returned and the filters it was made under. */
export interface CursorState {
  object: ObjectName;
  after: ListKey;
  since?: number;
  until?: number;
  includeDeleted?: boolean;
  where?: FieldEquals[];
}

interface CursorJson {
  v: 1;
  o: ObjectName;
  u: number;
  i: string;
  s?: number;
  e?: number;
  d?: true;
  w?: FieldEquals[];
}

/**
 * Cursors are base64url JSON plus a MAC. The MAC key derives from the seed, not from the process,
 * so a cursor saved before a sandbox restart (same seed) still resumes where it left off.
 */
export class CursorCodec {
  private readonly key: Buffer;

  constructor(seed: number) {
    this.key = createHmac('sha256', 'ferry-sandbox-cursor').update(String(seed)).digest();
  }

  encode(state: CursorState): string {
    const json: CursorJson = { v: 1, o: state.object, u: state.after.updatedAtMs, i: state.after.id };
    if (state.since !== undefined) json.s = state.since;
    if (state.until !== undefined) json.e = state.until;
    if (state.includeDeleted) json.d = true;
    if (state.where?.length) json.w = state.where;
    const payload = Buffer.from(JSON.stringify(json)).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  /** Throws a 400 validation error for anything not minted by encode() for this object. */
  decode(cursor: string, object: ObjectName): CursorState {
    const invalid = validationError('The cursor is invalid or was altered.', [
      { name: 'cursor', message: 'Pass back nextCursor exactly as returned.' },
    ]);
    const [payload, mac, extra] = cursor.split('.');
    if (!payload || !mac || extra !== undefined) throw invalid;
    const expected = Buffer.from(this.mac(payload));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid;
    let json: CursorJson;
    try {
      json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CursorJson;
    } catch {
      throw invalid;
    }
    if (json.v !== 1 || json.o !== object || typeof json.u !== 'number' || typeof json.i !== 'string') {
      throw invalid;
    }
    return {
      object,
      after: { updatedAtMs: json.u, id: json.i },
      since: json.s,
      until: json.e,
      includeDeleted: json.d === true,
      ...(Array.isArray(json.w) && { where: json.w }),
    };
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url').slice(0, 22);
  }
}
