import Type, { type Static } from 'typebox';
import { DateTime, ProjectIdOrName, UpdateMask, Uuid } from './common.js';

const Label = Type.String({ minLength: 1, maxLength: 200, description: 'A human-readable name.' });

/** The `aud` and `iss` a key may require of its tokens: compared exactly, as JWT claims are (RFC 7519). */
const Audience = Type.String({
  minLength: 1,
  maxLength: 1000,
  description:
    'Tokens signed with this key must name this audience in their `aud` claim (a string, or an array holding it). Unset: `aud` is not checked.',
});
const Issuer = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: 'Tokens signed with this key must carry this `iss` claim. Unset: `iss` is not checked.',
});

export const JwtKeySchema = Type.Object({
  id: Uuid,
  projectId: Uuid,
  label: Type.String(),
  algorithm: Type.Literal('RSA'),
  publicKeyPem: Type.String({ description: 'The RSA public key, PEM-encoded.' }),
  active: Type.Boolean({ description: 'Whether tokens signed with this key are accepted.' }),
  audience: Type.Optional(Audience),
  issuer: Type.Optional(Issuer),
  createTime: DateTime,
  updateTime: DateTime,
});
export type JwtKeyView = Static<typeof JwtKeySchema>;

export const CreateJwtKeyBody = Type.Object(
  {
    label: Label,
    algorithm: Type.Enum(['RSA', 'RS256'], {
      description:
        'The key’s algorithm: `RS256`, as the public API’s request names it, or `RSA`, as keys are shown; the same RSA keys, tokens signed RS256.',
    }),
    publicKeyPem: Type.String({
      minLength: 1,
      maxLength: 20_000,
      description: 'An RSA public key of at least 2048 bits (`-----BEGIN PUBLIC KEY-----`).',
    }),
    active: Type.Optional(Type.Boolean({ default: true })),
    audience: Type.Optional(Audience),
    issuer: Type.Optional(Issuer),
  },
  { additionalProperties: false },
);

export const UpdateJwtKeyBody = Type.Object(
  {
    updateMask: UpdateMask,
    jwtKey: Type.Object(
      {
        label: Type.Optional(Label),
        active: Type.Optional(Type.Boolean()),
        audience: Type.Optional(
          Type.Union([Audience, Type.Null()], { description: 'null stops checking `aud`.' }),
        ),
        issuer: Type.Optional(
          Type.Union([Issuer, Type.Null()], { description: 'null stops checking `iss`.' }),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const JwtKeyListQuery = Type.Object({
  active: Type.Optional(
    Type.Boolean({ default: false, description: 'true returns only active keys; false returns all.' }),
  ),
});

export const JwtKeyParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  keyId: Type.String({ minLength: 1, description: 'The JWT key ID.' }),
});

/** The created key, with `kid` as the public API answers a create (the `kid` tokens name it by). */
export const CreatedJwtKeySchema = Type.Intersect([
  JwtKeySchema,
  Type.Object({ kid: Type.String({ description: 'The `kid` header of tokens it signs: its id.' }) }),
]);
