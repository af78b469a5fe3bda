import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import type { TestStack } from './stack.js';

/**
 * Registers a project JWT key on the stack's project and returns a minter, as a builder's backend
 * would: `mint({ groupRef })` signs a token for one group (RS256, `kid`, 10 minutes).
 */
export async function projectJwtMinter(
  stack: TestStack,
): Promise<(claims?: { groupRef?: string; sub?: string }) => Promise<string>> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = await stack.api('POST', `/projects/${stack.project.id}/jwt-keys`, {
    body: {
      label: 'browser',
      algorithm: 'RSA',
      publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    },
  });
  if (key.status !== 201) throw new Error(`jwt key: ${JSON.stringify(key.body)}`);
  return async ({ groupRef, sub } = {}) => {
    const token = new SignJWT(groupRef === undefined ? {} : { groupRef })
      .setProtectedHeader({ alg: 'RS256', kid: key.body.id })
      .setExpirationTime('10m');
    if (sub) token.setSubject(sub);
    return token.sign(privateKey);
  };
}
