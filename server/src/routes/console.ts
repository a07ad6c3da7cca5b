import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AppError } from '../errors.js';
import type { AccountService } from '../services/account.service.js';
import type { AudioPeaksService } from '../services/audio-peaks.service.js';
import type { ConsoleAuthService } from '../services/console-auth.service.js';
import type { CredentialService } from '../services/credential.service.js';
import { errorResponses, JobIdParams } from '../schemas/job.schema.js';
import {
  ApiKeyView, ConsoleUserView, CreateClientBody, CreateKeyBody, CreditsQuery, CreditsView, GrantBody, MediaClientView, PeaksQuery, PeaksView,
  SignInBody, TenantView,
} from '../schemas/console.schema.js';
import { CONSOLE_HEADER, SESSION_COOKIE, requireConsoleUser } from './auth.js';

export interface ConsoleRoutesOptions {
  sessions: ConsoleAuthService;
  credentials: CredentialService;
  accounts: AccountService;
  peaks: AudioPeaksService;
  /** Sign-in attempts per email and client address per minute. */
  loginAttemptsPerMinute: number;
  /** Cookies marked Secure always (PUBLIC_URL is https) or when the request came over https. */
  secureCookies: boolean | 'auto';
}

/** The web console's own routes, under /console/api; its jobs go through /api/v1 with the session. */
export const consoleRoutes: FastifyPluginAsyncTypebox<ConsoleRoutesOptions> = async (app, options) => {
  const { sessions, credentials, accounts, peaks } = options;
  const member = requireConsoleUser(sessions, 'member');
  const admin = requireConsoleUser(sessions, 'admin');
  const operator = requireConsoleUser(sessions, 'operator');
  const userOf = (request: FastifyRequest) => request.consoleUser!;
  const userView = async (user: ReturnType<typeof userOf>, expiresAt?: string) => {
    const tenant = await accounts.summary(user.tenantId);
    return { email: user.email, role: user.role, permissions: [...user.permissions], tenant, expiresAt };
  };

  app.post('/session', {
    schema: { tags: ['console'], summary: 'Sign in to the console', body: SignInBody, response: { 200: ConsoleUserView, ...errorResponses(400, 401, 403, 429) } },
    config: {
      rateLimit: {
        // After the body is parsed: the key includes the email.
        hook: 'preHandler',
        max: options.loginAttemptsPerMinute,
        timeWindow: 60_000,
        // Per address and email: one person's typos do not lock out a whole office, and
        // guessing one account's password from one address is slowed to a crawl.
        keyGenerator: (request) => `${request.ip}\u0000${String((request.body as { email?: unknown } | undefined)?.email ?? '').trim().toLowerCase()}`,
        errorResponseBuilder: (_request, context) => new AppError('TOO_MANY_REQUESTS', `Too many sign-in attempts; try again in ${Math.ceil(context.ttl / 1000)} s`),
      },
    },
  }, async (request, reply) => {
    if (!request.headers[CONSOLE_HEADER]) throw new AppError('FORBIDDEN', `Sign in from the console (the ${CONSOLE_HEADER} header is missing)`);
    const session = await sessions.signIn(request.body.email, request.body.password);
    if (!session) throw new AppError('INVALID_CREDENTIALS', 'The email or password is wrong');
    reply.setCookie(SESSION_COOKIE, session.token, { path: '/', httpOnly: true, sameSite: 'strict', secure: options.secureCookies, expires: new Date(session.expiresAt) });
    return userView(session.principal, session.expiresAt);
  });

  app.get('/session', {
    onRequest: member,
    schema: { tags: ['console'], summary: 'The signed-in console user', response: { 200: ConsoleUserView, ...errorResponses(401, 403) } },
  }, async (request) => userView(userOf(request)));

  app.delete('/session', {
    onRequest: member,
    schema: { tags: ['console'], summary: 'Sign out', response: { 204: Type.Null(), ...errorResponses(401, 403) } },
  }, async (request, reply) => {
    await sessions.signOut(request.cookies[SESSION_COOKIE]!);
    return reply.clearCookie(SESSION_COOKIE, { path: '/' }).code(204).send(null);
  });

  app.get('/keys', {
    onRequest: admin,
    schema: { tags: ['console'], summary: "The tenant's API keys", response: { 200: Type.Object({ data: Type.Array(ApiKeyView) }), ...errorResponses(401, 403) } },
  }, async (request) => ({ data: await credentials.listApiKeys(userOf(request).tenantId) }));

  app.post('/keys', {
    onRequest: admin,
    schema: { tags: ['console'], summary: 'Create an API key (its value is shown once)', body: CreateKeyBody, response: { 200: Type.Object({ keyId: Type.String(), key: Type.String() }), ...errorResponses(400, 401, 403) } },
  }, async (request) => {
    const created = await credentials.createApiKey(userOf(request).tenantId, request.body.name, request.body.permissions);
    return { keyId: created.id, key: created.key };
  });

  app.delete('/keys/:keyId', {
    onRequest: admin,
    schema: { tags: ['console'], summary: 'Revoke an API key', params: Type.Object({ keyId: Type.String({ maxLength: 64 }) }), response: { 200: Type.Object({ keyId: Type.String(), revokedAt: Type.String() }), ...errorResponses(401, 403, 404) } },
  }, async (request) => credentials.revokeApiKey(request.params.keyId, userOf(request).tenantId));

  app.get('/clients', {
    onRequest: admin,
    schema: { tags: ['console'], summary: "The tenant's media-API clients", response: { 200: Type.Object({ data: Type.Array(MediaClientView) }), ...errorResponses(401, 403) } },
  }, async (request) => ({ data: await credentials.listMediaClients(userOf(request).tenantId) }));

  app.post('/clients', {
    onRequest: admin,
    schema: { tags: ['console'], summary: 'Create a media-API client (its secret is shown once)', body: CreateClientBody, response: { 200: Type.Object({ clientId: Type.String(), clientSecret: Type.String() }), ...errorResponses(400, 401, 403) } },
  }, async (request) =>
    credentials.createMediaClient(userOf(request).tenantId, request.body.permissions, { query: request.body.queryQuota ?? null, mutation: request.body.mutationQuota ?? null, periodSeconds: 86_400 }),
  );

  app.delete('/clients/:clientId', {
    onRequest: admin,
    schema: { tags: ['console'], summary: 'Revoke a media-API client', params: Type.Object({ clientId: Type.String({ maxLength: 64 }) }), response: { 200: Type.Object({ clientId: Type.String(), revokedAt: Type.String() }), ...errorResponses(401, 403, 404) } },
  }, async (request) => credentials.revokeMediaClient(request.params.clientId, userOf(request).tenantId));

  app.get('/credits', {
    onRequest: member,
    schema: { tags: ['console'], summary: 'Balance, ledger and spending per day and task type (30 days)', querystring: CreditsQuery, response: { 200: CreditsView, ...errorResponses(400, 401, 403) } },
  }, async (request) => accounts.credits(userOf(request).tenantId, request.query.page, request.query.pageSize));

  app.get('/jobs/:id/peaks', {
    onRequest: member,
    schema: { tags: ['console'], summary: "Waveform peaks of a job's audio input or track", params: JobIdParams, querystring: PeaksQuery, response: { 200: PeaksView, ...errorResponses(400, 401, 403, 404) } },
  }, async (request) => peaks.peaks(userOf(request).tenantId, request.params.id, request.query.file, request.query.bins));

  app.get('/tenants', {
    onRequest: operator,
    schema: { tags: ['console'], summary: 'Every tenant (operators)', response: { 200: Type.Object({ data: Type.Array(TenantView) }), ...errorResponses(401, 403) } },
  }, async () => ({ data: await accounts.tenants() }));

  app.post('/tenants/:tenantId/credits', {
    onRequest: operator,
    schema: { tags: ['console'], summary: 'Grant credits to a tenant (operators)', params: Type.Object({ tenantId: Type.String({ maxLength: 64 }) }), body: GrantBody, response: { 200: Type.Object({ balance: Type.Integer(), reserved: Type.Integer() }), ...errorResponses(400, 401, 403, 404) } },
  }, async (request) => accounts.grant(request.params.tenantId, request.body.amount, request.body.note || `granted in the console by ${userOf(request).email}`));
};
