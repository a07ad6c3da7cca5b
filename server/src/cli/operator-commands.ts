/**
 * The operator commands of DESIGN.md §7: tenants, API keys, media clients, credits. They open
 * the database directly (DATA_DIR or DATABASE_URL, as the server does), so they work whether or
 * not a server is running, and with --json print exactly one JSON value.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { notifyCredentialRevoked } from '../queue/notify.js';
import { repositoriesFor, transactionRunner } from '../repositories/index.js';
import { API_KEY_PERMISSIONS, CredentialService, MEDIA_PERMISSIONS, parsePermissions } from '../services/credential.service.js';
import { grantCredits } from '../services/credit.service.js';
import { AccountService } from '../services/account.service.js';
import { CONSOLE_ROLES, ConsoleAuthService } from '../services/console-auth.service.js';
import type { ConsoleRole } from '../db/schema.js';
import { newWebhookSecret, validateWebhookUrl } from '../services/webhook.service.js';

export const integerArg = (name: string, min = 0) => (value: string) => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < min) throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
  return number;
};

function print(json: boolean | undefined, value: object, human: string): void {
  console.log(json ? JSON.stringify(value) : human);
}

interface OperatorDeps {
  config: Config;
  repos: ReturnType<typeof repositoriesFor>;
  transaction: ReturnType<typeof transactionRunner>;
  credentials: CredentialService;
}

async function withRepositories<T>(work: (deps: OperatorDeps) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  const repos = repositoriesFor(db.kysely);
  // A key revoked here is dropped at once by running API processes on PostgreSQL (NOTIFY).
  const credentials = new CredentialService(repos, async (keyId) => {
    if (db.pool) await notifyCredentialRevoked(db.pool, keyId).catch(() => {});
  });
  try {
    return await work({ config, repos, transaction: transactionRunner(db), credentials });
  } finally {
    await db.close();
  }
}

export function registerOperatorCommands(program: Command): void {
  const tenant = program.command('tenant').description('manage tenants');
  tenant
    .command('create')
    .requiredOption('--name <name>', 'tenant name')
    .option('--credits <n>', 'initial credits', integerArg('--credits'), 0)
    .option('--pay-as-you-go', 'allow the balance to go negative')
    .option('--json', 'print one JSON object')
    .action(async (options: { name: string; credits: number; payAsYouGo?: boolean; json?: boolean }) => {
      const created = await withRepositories(({ transaction }) =>
        transaction(async (repos) => {
          const row = await repos.tenants.insert(options.name, Boolean(options.payAsYouGo));
          if (options.credits > 0) await grantCredits(repos, row.id, options.credits, 'initial credits');
          return row;
        }),
      );
      print(options.json, { tenantId: created.id, name: created.name, balance: options.credits }, `tenant ${created.id} (${created.name}) with ${options.credits} credits`);
    });

  tenant
    .command('list')
    .description('every tenant with its balance')
    .option('--json', 'print one JSON array')
    .action(async (options: { json?: boolean }) => {
      const tenants = (await withRepositories(({ repos }) => repos.tenants.list())).map((row) => ({
        tenantId: row.id,
        name: row.name,
        balance: row.balance,
        reserved: row.reserved,
        payAsYouGo: row.pay_as_you_go === 1,
        createdAt: row.created_at,
      }));
      print(options.json, tenants, tenants.map((t) => `${t.tenantId}  ${t.name}  balance ${t.balance} (${t.reserved} reserved)`).join('\n') || '(no tenants)');
    });
  tenant
    .command('webhook')
    .description("set the tenant's default webhook URL and print the secret its deliveries are signed with")
    .requiredOption('--tenant <id>', 'tenant id')
    .option('--url <url>', 'default webhook URL for the tenant\'s jobs ("none" to clear)')
    .option('--rotate-secret', 'replace the signing secret')
    .option('--json', 'print one JSON object')
    .action(async (options: { tenant: string; url?: string; rotateSecret?: boolean; json?: boolean }) => {
      const settings = await withRepositories(async ({ config, repos }) => {
        const row = await repos.tenants.find(options.tenant);
        if (!row) throw new Error(`no tenant ${options.tenant}`);
        const url = options.url === undefined ? undefined : options.url === 'none' ? null : validateWebhookUrl(options.url, config.webhookAllowPrivate);
        const secret = !row.webhook_secret || options.rotateSecret ? newWebhookSecret() : row.webhook_secret;
        await repos.webhooks.setTenantWebhook(row.id, url, secret);
        return { url: url === undefined ? row.webhook_url : url, secret };
      });
      print(options.json, settings, `webhook ${settings.url ?? '(none: per-job webhookUrl only)'}\nsigning secret ${settings.secret}`);
    });

  const key = program.command('key').description('manage API keys of the job API');
  key
    .command('create')
    .requiredOption('--tenant <id>', 'tenant id')
    .requiredOption('--name <name>', 'key name, e.g. production, staging, ci')
    .option('--permissions <list>', `comma-separated: ${API_KEY_PERMISSIONS.join(',')}`, 'jobs:read,jobs:write')
    .option('--json', 'print one JSON object')
    .action(async (options: { tenant: string; name: string; permissions: string; json?: boolean }) => {
      const permissions = parsePermissions(options.permissions, API_KEY_PERMISSIONS);
      const { key: value, id } = await withRepositories(({ credentials }) => credentials.createApiKey(options.tenant, options.name, permissions));
      print(options.json, { key: value, keyId: id, permissions }, `${value}\n(shown once: store it now)`);
    });
  key
    .command('list')
    .description("a tenant's keys, revoked ones included (their values are never shown again)")
    .requiredOption('--tenant <id>', 'tenant id')
    .option('--json', 'print one JSON array')
    .action(async (options: { tenant: string; json?: boolean }) => {
      const keys = await withRepositories(({ credentials }) => credentials.listApiKeys(options.tenant));
      const human = keys.map((k) => `${k.keyId}  ${k.prefix}…  ${k.name}  ${k.permissions.join(',')}  created ${k.createdAt}  last used ${k.lastUsedAt ?? 'never'}${k.revokedAt ? `  REVOKED ${k.revokedAt}` : ''}`);
      print(options.json, keys, human.join('\n') || '(no keys)');
    });
  key
    .command('revoke')
    .description('revoke a key: refused at once by this database\'s API processes (within 5 s without NOTIFY)')
    .requiredOption('--key <keyId>', 'key id (from key list)')
    .option('--json', 'print one JSON object')
    .action(async (options: { key: string; json?: boolean }) => {
      const revoked = await withRepositories(({ credentials }) => credentials.revokeApiKey(options.key));
      print(options.json, revoked, `key ${revoked.keyId} revoked at ${revoked.revokedAt}`);
    });

  const client = program.command('client').description('manage media-record API clients');
  client
    .command('create')
    .requiredOption('--tenant <id>', 'tenant id')
    .option('--permissions <list>', `comma-separated: ${MEDIA_PERMISSIONS.join(',')}`, 'media:read,media:write')
    .option('--query-quota <n>', 'GET calls allowed per period', integerArg('--query-quota'))
    .option('--mutation-quota <n>', 'POST/DELETE calls allowed per period', integerArg('--mutation-quota'))
    .option('--quota-period-seconds <n>', 'length of a quota period', integerArg('--quota-period-seconds', 1), 86_400)
    .option('--json', 'print one JSON object')
    .action(async (options: { tenant: string; permissions: string; queryQuota?: number; mutationQuota?: number; quotaPeriodSeconds: number; json?: boolean }) => {
      const permissions = parsePermissions(options.permissions, MEDIA_PERMISSIONS);
      const created = await withRepositories(({ credentials }) =>
        credentials.createMediaClient(options.tenant, permissions, {
          query: options.queryQuota ?? null,
          mutation: options.mutationQuota ?? null,
          periodSeconds: options.quotaPeriodSeconds,
        }),
      );
      print(options.json, { ...created, permissions }, `client id ${created.clientId}\nclient secret ${created.clientSecret}\n(the secret is shown once)`);
    });
  client
    .command('list')
    .description("a tenant's media clients, revoked ones included")
    .requiredOption('--tenant <id>', 'tenant id')
    .option('--json', 'print one JSON array')
    .action(async (options: { tenant: string; json?: boolean }) => {
      const clients = await withRepositories(({ credentials }) => credentials.listMediaClients(options.tenant));
      const human = clients.map((c) => `${c.clientId}  ${c.permissions.join(',')}  created ${c.createdAt}  last used ${c.lastUsedAt ?? 'never'}${c.revokedAt ? `  REVOKED ${c.revokedAt}` : ''}`);
      print(options.json, clients, human.join('\n') || '(no clients)');
    });
  client
    .command('revoke')
    .description('revoke a media client: its next call is refused (IAM001)')
    .requiredOption('--client <clientId>', 'client id (from client list)')
    .option('--json', 'print one JSON object')
    .action(async (options: { client: string; json?: boolean }) => {
      const revoked = await withRepositories(({ credentials }) => credentials.revokeMediaClient(options.client));
      print(options.json, revoked, `client ${revoked.clientId} revoked at ${revoked.revokedAt}`);
    });

  const credits = program.command('credits').description('manage credit balances');
  credits
    .command('grant')
    .requiredOption('--tenant <id>', 'tenant id')
    .requiredOption('--amount <n>', 'credits to add (negative to remove)', (value: string) => {
      const number = Number(value);
      if (!Number.isInteger(number)) throw new InvalidArgumentError('--amount must be an integer');
      return number;
    })
    .option('--json', 'print one JSON object')
    .action(async (options: { tenant: string; amount: number; json?: boolean }) => {
      const tenantRow = await withRepositories(({ repos, transaction }) => new AccountService({ repos, transaction }).grant(options.tenant, options.amount, 'granted by operator'));
      print(options.json, { balance: tenantRow.balance, reserved: tenantRow.reserved }, `balance ${tenantRow.balance} (${tenantRow.reserved} reserved)`);
    });
  credits
    .command('show')
    .requiredOption('--tenant <id>', 'tenant id')
    .option('--json', 'print one JSON object')
    .action(async (options: { tenant: string; json?: boolean }) => {
      const { row, ledger } = await withRepositories(async ({ repos }) => ({
        row: await repos.tenants.find(options.tenant),
        ledger: await repos.ledger.totals(options.tenant),
      }));
      if (!row) throw new Error(`no tenant ${options.tenant}`);
      print(options.json, { balance: row.balance, reserved: row.reserved, ledger }, `balance ${row.balance}, reserved ${row.reserved} (ledger: ${ledger.balance} / ${ledger.reserved})`);
    });

  const user = program.command('user').description('manage web console users');
  user
    .command('create')
    .requiredOption('--tenant <id>', 'tenant id')
    .requiredOption('--email <email>', 'sign-in email (unique across the service)')
    .requiredOption('--password <password>', 'at least 10 characters')
    .option('--role <role>', `${CONSOLE_ROLES.join(' | ')} (operator: sees every tenant and grants credits)`, 'member')
    .option('--json', 'print one JSON object')
    .action(async (options: { tenant: string; email: string; password: string; role: string; json?: boolean }) => {
      if (!CONSOLE_ROLES.includes(options.role as ConsoleRole)) throw new InvalidArgumentError(`--role must be one of ${CONSOLE_ROLES.join(', ')}`);
      const created = await withRepositories(({ config, repos }) =>
        new ConsoleAuthService(repos, config.consoleSessionSeconds).createUser(options.tenant, options.email, options.password, options.role as ConsoleRole),
      );
      print(options.json, created, `console user ${created.userId} created`);
    });
}
