import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { config, ConfigError } from '../config.js';

/**
 * How Ferry's client and worker reach Temporal: the address of TEMPORAL_ADDRESS, with TLS, mutual
 * TLS, an API key and gRPC metadata read from Temporal's own client variables (TEMPORAL_API_KEY,
 * TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH / _DATA, TEMPORAL_TLS_CLIENT_KEY_PATH / _DATA,
 * TEMPORAL_TLS_SERVER_CA_CERT_PATH / _DATA, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_GRPC_META_*), so
 * the settings that connect an operator's `temporal` CLI to a cluster or to Temporal Cloud connect
 * Ferry too. Only the environment is read, as for the rest of Ferry's settings: no TOML profile.
 */
export function temporalConnectionOptions(
  env: NodeJS.ProcessEnv = process.env,
): NativeConnectionOptions & { address: string } {
  const variables = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  let connectionOptions: NativeConnectionOptions;
  try {
    ({ connectionOptions } = loadClientConnectConfig({ overrideEnvVars: variables, disableFile: true }));
  } catch (error) {
    throw new ConfigError(`Temporal TLS settings (TEMPORAL_TLS_*): ${(error as Error).message}`);
  }
  const { tls, apiKey, metadata } = connectionOptions;
  return {
    address: config().temporal.address,
    ...(tls !== undefined && { tls }),
    ...(apiKey !== undefined && { apiKey }),
    ...(metadata && Object.keys(metadata).length && { metadata }),
  };
}
