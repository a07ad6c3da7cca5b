/**
 * Console users and sessions. Passwords are hashed with scrypt (RFC 7914): a memory-hard
 * function, because people choose low-entropy passwords. Session tokens are random and stored
 * as SHA-256 hashes, like API keys. Every account answers a failed sign-in the same way, and an
 * unknown email costs the same scrypt run as a wrong password, so neither the answer nor its
 * timing tells whether an email has an account.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { ConsoleRole, ConsoleUserTable } from '../db/schema.js';
import type { Repositories } from '../repositories/index.js';
import { isoAt, SYSTEM_SOURCES, type Sources } from '../repositories/clock.js';
import { API_KEY_PERMISSIONS, hashSecret, randomBase62, type ApiKeyPermission } from './credential.service.js';

export const CONSOLE_ROLES = ['member', 'admin', 'operator'] as const satisfies readonly ConsoleRole[];

/** What each role may do: members run and read jobs and faces; admins also delete them and manage keys. */
const ROLE_PERMISSIONS: Record<ConsoleRole, readonly ApiKeyPermission[]> = {
  member: ['jobs:read', 'jobs:write', 'faces:read', 'faces:write'],
  admin: API_KEY_PERMISSIONS,
  operator: API_KEY_PERMISSIONS,
};

const SCRYPT = { N: 16_384, r: 8, p: 1, keyLength: 32 };
const MIN_PASSWORD_LENGTH = 10;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}$/;

export interface ConsolePrincipal {
  userId: string;
  email: string;
  tenantId: string;
  role: ConsoleRole;
  permissions: ReadonlySet<string>;
}

function scryptAsync(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))));
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT.keyLength, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
  return timingSafeEqual(actual, expected);
}

export const principalOf = (user: ConsoleUserTable): ConsolePrincipal => ({
  userId: user.id,
  email: user.email,
  tenantId: user.tenant_id,
  role: user.role,
  permissions: new Set(ROLE_PERMISSIONS[user.role]),
});

export class ConsoleAuthService {
  /** Hashed on first use, so an unknown email costs one scrypt run like a known one. */
  private decoyHash: Promise<string> | null = null;

  constructor(
    private readonly repos: Pick<Repositories, 'console' | 'tenants'>,
    private readonly sessionSeconds: number,
    private readonly sources: Sources = SYSTEM_SOURCES,
  ) {}

  async createUser(tenantId: string, email: string, password: string, role: ConsoleRole): Promise<{ userId: string }> {
    if (!(await this.repos.tenants.find(tenantId))) throw new Error(`no tenant ${tenantId}`);
    const normalised = email.trim().toLowerCase();
    if (!EMAIL.test(normalised)) throw new Error(`not an email address: ${email}`);
    if (password.length < MIN_PASSWORD_LENGTH) throw new Error(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
    if (!CONSOLE_ROLES.includes(role)) throw new Error(`unknown role ${role}; allowed: ${CONSOLE_ROLES.join(', ')}`);
    if (await this.repos.console.findUserByEmail(normalised)) throw new Error(`a console user with email ${normalised} exists already`);
    const userId = this.sources.ids();
    await this.repos.console.insertUser({ id: userId, tenant_id: tenantId, email: normalised, password_hash: await hashPassword(password), role, created_at: isoAt(this.sources.clock.now()) });
    return { userId };
  }

  /** A new session for the right email and password; null otherwise (whichever was wrong). */
  async signIn(email: string, password: string): Promise<{ token: string; expiresAt: string; principal: ConsolePrincipal } | null> {
    const user = await this.repos.console.findUserByEmail(email.trim().toLowerCase());
    const valid = await verifyPassword(password, user?.password_hash ?? (await (this.decoyHash ??= hashPassword(randomBase62(16)))));
    if (!user || !valid) return null;
    const token = `ses_${randomBase62(32)}`;
    const now = new Date(this.sources.clock.now());
    const expiresAt = new Date(now.getTime() + this.sessionSeconds * 1000).toISOString();
    await this.repos.console.insertSession({ token_hash: hashSecret(token), user_id: user.id, created_at: now.toISOString(), expires_at: expiresAt });
    // Sign-ins are rare next to requests: a good moment to drop sessions that have expired.
    void this.repos.console.deleteExpiredSessions(now.toISOString()).catch(() => {});
    return { token, expiresAt, principal: principalOf(user) };
  }

  /** The signed-in user of a session token, or null when it is unknown or expired. */
  async authenticate(token: string): Promise<ConsolePrincipal | null> {
    if (!token.startsWith('ses_') || token.length > 100) return null;
    const user = await this.repos.console.findSessionUser(hashSecret(token), isoAt(this.sources.clock.now()));
    return user ? principalOf(user) : null;
  }

  async signOut(token: string): Promise<void> {
    await this.repos.console.deleteSession(hashSecret(token));
  }
}
