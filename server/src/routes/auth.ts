/**
 * Who is calling: a Bearer API key (SPEC.md §5.1), or a web console session, with
 * `resource:action` permissions either way. A session rides in an HttpOnly, SameSite=Strict
 * cookie; requests made with it must also carry the console's header, which a page on another
 * site cannot send without a CORS preflight that this service never grants (CSRF).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { ApiKeyPermission, CredentialService } from '../services/credential.service.js';
import type { ConsoleAuthService, ConsolePrincipal } from '../services/console-auth.service.js';

export interface Principal {
  tenantId: string;
  permissions: ReadonlySet<string>;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    consoleUser?: ConsolePrincipal;
  }
}

export const SESSION_COOKIE = 'mediaproof_session';
export const CONSOLE_HEADER = 'x-mediaproof-console';

export interface Authenticators {
  credentials: CredentialService;
  /** Console sessions; absent where the console is not served (they are then refused). */
  sessions?: ConsoleAuthService;
}

/** The console user of a request carrying the session cookie, or null without one; throws for a bad session. */
export async function consoleUserOf(sessions: ConsoleAuthService | undefined, request: FastifyRequest): Promise<ConsolePrincipal | null> {
  const token = request.cookies?.[SESSION_COOKIE];
  if (!token || !sessions) return null;
  if (!request.headers[CONSOLE_HEADER]) throw new AppError('FORBIDDEN', `Requests made with a console session must send the ${CONSOLE_HEADER} header`);
  const user = await sessions.authenticate(token);
  if (!user) throw new AppError('NOT_SIGNED_IN', 'The console session has expired or was signed out; sign in again');
  return user;
}

export function requirePermission(auth: Authenticators, permission: ApiKeyPermission) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const header = request.headers.authorization;
    if (!header) {
      const user = await consoleUserOf(auth.sessions, request);
      if (user) {
        if (!user.permissions.has(permission)) throw new AppError('FORBIDDEN', `The ${user.role} role lacks the ${permission} permission`);
        request.principal = user;
        return;
      }
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    const principal = match ? await auth.credentials.authenticateApiKey(match[1]!) : null;
    if (!principal) throw new AppError('INVALID_API_KEY', match ? 'The API key is invalid or revoked' : 'Missing API key: send Authorization: Bearer <API_KEY>');
    if (!principal.permissions.has(permission)) throw new AppError('FORBIDDEN', `This API key lacks the ${permission} permission`);
    request.principal = principal;
  };
}

/** The signed-in console user, with at least `role` (member < admin < operator). */
export function requireConsoleUser(sessions: ConsoleAuthService, role: ConsolePrincipal['role'] = 'member') {
  const rank = { member: 0, admin: 1, operator: 2 } as const;
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const user = await consoleUserOf(sessions, request);
    if (!user) throw new AppError('NOT_SIGNED_IN', 'Sign in to the console first');
    if (rank[user.role] < rank[role]) throw new AppError('FORBIDDEN', `This needs the ${role} role; you are ${user.role}`);
    request.consoleUser = user;
  };
}

export const tenantOf = (request: FastifyRequest): string => request.principal!.tenantId;
