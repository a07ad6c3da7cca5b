/** Bearer API keys and `resource:action` permissions for the job API (SPEC.md §5.1). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { ApiKeyPrincipal, CredentialService, JobPermission } from '../services/credential.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: ApiKeyPrincipal;
  }
}

export function requirePermission(credentials: CredentialService, permission: JobPermission) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const principal = match ? await credentials.authenticateApiKey(match[1]!) : null;
    if (!principal) throw new AppError('INVALID_API_KEY', match ? 'The API key is invalid or revoked' : 'Missing API key: send Authorization: Bearer <API_KEY>');
    if (!principal.permissions.has(permission)) throw new AppError('FORBIDDEN', `This API key lacks the ${permission} permission`);
    request.principal = principal;
  };
}

export const tenantOf = (request: FastifyRequest): string => request.principal!.tenantId;
