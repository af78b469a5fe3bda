import { ConnectorInputError } from './errors.js';

/**
 * Connector page tokens: versioned base64url JSON, opaque to callers. They are not signed: a
 * tampered token can only make the connector ask the same customer's account a different question.
 */
export function encodePageToken(state: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify({ v: 1, ...state })).toString('base64url');
}

/** Decodes a token minted by `encodePageToken` for this object; anything else is a `ConnectorInputError`. */
export function decodePageToken<T extends Record<string, unknown>>(
  token: string,
  provider: string,
  objectName: string,
): T {
  let state: Record<string, unknown> | undefined;
  try {
    state = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    state = undefined;
  }
  if (!state || typeof state !== 'object' || state.v !== 1 || state.o !== objectName) {
    throw new ConnectorInputError(
      `The page token was not issued for a read of ${objectName} from "${provider}"; pass back nextPageToken unchanged.`,
      provider,
    );
  }
  return state as T;
}
