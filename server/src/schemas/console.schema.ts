/** Request and response shapes of the web console's own routes (/console/api). */
import { Type } from '@sinclair/typebox';
import { API_KEY_PERMISSIONS, MEDIA_PERMISSIONS } from '../services/credential.service.js';
import { CONSOLE_ROLES } from '../services/console-auth.service.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const SignInBody = Type.Object({ email: Type.String({ maxLength: 254 }), password: Type.String({ maxLength: 1024 }) }, { additionalProperties: false });

export const ConsoleUserView = Type.Object({
  email: Type.String(),
  role: Type.Union(CONSOLE_ROLES.map((role) => Type.Literal(role))),
  permissions: Type.Array(Type.String()),
  tenant: Type.Object({ id: Type.String(), name: Type.String() }),
  expiresAt: Type.Optional(Type.String()),
});

export const ApiKeyView = Type.Object({
  keyId: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  permissions: Type.Array(Type.String()),
  createdAt: Type.String(),
  lastUsedAt: Nullable(Type.String()),
  revokedAt: Nullable(Type.String()),
});

export const CreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    permissions: Type.Array(Type.Union(API_KEY_PERMISSIONS.map((p) => Type.Literal(p))), { minItems: 1, maxItems: API_KEY_PERMISSIONS.length, uniqueItems: true }),
  },
  { additionalProperties: false },
);

export const MediaClientView = Type.Object({
  clientId: Type.String(),
  permissions: Type.Array(Type.String()),
  queryQuota: Type.Union([Type.Integer(), Type.Null()]),
  mutationQuota: Type.Union([Type.Integer(), Type.Null()]),
  quotaPeriodSeconds: Type.Integer(),
  createdAt: Type.String(),
  lastUsedAt: Nullable(Type.String()),
  revokedAt: Nullable(Type.String()),
});

export const CreateClientBody = Type.Object(
  {
    permissions: Type.Array(Type.Union(MEDIA_PERMISSIONS.map((p) => Type.Literal(p))), { minItems: 1, maxItems: MEDIA_PERMISSIONS.length, uniqueItems: true }),
    queryQuota: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    mutationQuota: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  },
  { additionalProperties: false },
);

export const CreditsQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  pageSize: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
});

export const CreditsView = Type.Object({
  tenant: Type.Object({ id: Type.String(), name: Type.String() }),
  balance: Type.Integer(),
  reserved: Type.Integer(),
  payAsYouGo: Type.Boolean(),
  ledger: Type.Object({
    items: Type.Array(
      Type.Object({
        id: Type.String(),
        kind: Type.String(),
        amount: Type.Integer(),
        reservedDelta: Type.Integer(),
        jobId: Nullable(Type.String()),
        taskType: Nullable(Type.String()),
        note: Nullable(Type.String()),
        createdAt: Type.String(),
      }),
    ),
    total: Type.Integer(),
    page: Type.Integer(),
    pageSize: Type.Integer(),
  }),
  usage: Type.Array(Type.Object({ day: Type.String(), taskType: Nullable(Type.String()), credits: Type.Integer(), jobs: Type.Integer() })),
});

export const TenantView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  balance: Type.Integer(),
  reserved: Type.Integer(),
  payAsYouGo: Type.Boolean(),
  createdAt: Type.String(),
});

export const GrantBody = Type.Object(
  { amount: Type.Integer({ minimum: -1_000_000_000, maximum: 1_000_000_000 }), note: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
);

export const PeaksQuery = Type.Object({
  file: Type.String({ pattern: '^[A-Za-z0-9_.-]{1,128}$', description: 'input-N or an artifact id' }),
  bins: Type.Integer({ minimum: 16, maximum: 4000, default: 800 }),
});

export const PeaksView = Type.Object({ durationSeconds: Type.Number(), peaks: Type.Array(Type.Number()) });
