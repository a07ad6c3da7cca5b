/**
 * The `mediaproof` program: `serve` (with --role all | api | worker) and the operator
 * commands of DESIGN.md §7. The operator commands open the database directly, so they work
 * whether or not a server is running, and with --json print exactly one JSON object.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase } from './db/database.js';
import { repositoriesFor, transactionRunner } from './repositories/index.js';
import { CredentialService, JOB_PERMISSIONS, MEDIA_PERMISSIONS, parsePermissions } from './services/credential.service.js';
import { grantCredits } from './services/credit.service.js';
import { newWebhookSecret, validateWebhookUrl } from './services/webhook.service.js';
import type { Role } from './runtime.js';
import { createOpsServer } from './ops-server.js';
import { registerClientCommands } from './cli/client-commands.js';

const integerArg = (name: string, min = 0) => (value: string) => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < min) throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
  return number;
};

function print(json: boolean | undefined, object: Record<string, unknown>, human: string): void {
  console.log(json ? JSON.stringify(object) : human);
}

async function withRepositories<T>(work: (deps: { config: Config; repos: ReturnType<typeof repositoriesFor>; transaction: ReturnType<typeof transactionRunner> }) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    return await work({ config, repos: repositoriesFor(db.kysely), transaction: transactionRunner(db) });
  } finally {
    await db.close();
  }
}

async function serve(options: { role: Role; concurrency?: number }): Promise<void> {
  const config = loadConfig(options.concurrency ? { ...process.env, WORKER_CONCURRENCY: String(options.concurrency) } : process.env);
  // Loaded here, not at the top: the operator and client commands need none of the server.
  const { createLogger, createRuntime } = await import('./runtime.js');
  const logger = createLogger(config);
  const runtime = await createRuntime(config, options.role, logger);
  // Handlers first: a SIGTERM that arrives while the process is still starting must shut down cleanly.
  let ops: ReturnType<typeof createOpsServer> | null = null;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new work is claimed, running jobs finish or go back to the queue');
    ops?.close();
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  if (runtime.app) await runtime.app.listen({ host: config.host, port: config.port });
  // A worker has no API to scrape: METRICS_PORT gives it /metrics, /healthz and /readyz.
  ops = config.metricsPort === null ? null : createOpsServer(runtime);
  if (ops) {
    const server = ops;
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(config.metricsPort!, config.host, resolve));
    const { port } = server.address() as { port: number };
    logger.info({ metricsUrl: `http://${config.host}:${port}/metrics` }, 'operations endpoints listening');
  }
  const storage = config.databaseUrl ? 'PostgreSQL' : `SQLite in ${config.dataDir}`;
  logger.info({ role: options.role, url: config.publicUrl, storage, workers: runtime.worker ? config.workerConcurrency : 0 }, 'mediaproof started');
  if (runtime.app) {
    process.stderr.write(
      `\nmediaproof is listening on ${config.publicUrl} (role ${options.role}, ${storage}).\n` +
        `Create a first tenant and API key:\n` +
        `  npm run -s cli -- tenant create --name acme --credits 100 --json\n` +
        `  npm run -s cli -- key create --tenant <tenantId> --name dev --permissions jobs:read,jobs:write,jobs:delete --json\n\n`,
    );
  }
}

export function buildProgram(): Command {
  const program = new Command('mediaproof').description('Self-hostable media authenticity detection service').showHelpAfterError();

  program
    .command('serve')
    .description('run the API and the workers (the embedded default), or one role of a scaled-out deployment')
    .addOption(new Option('--role <role>', 'which part to run').choices(['all', 'api', 'worker']).default('all'))
    .option('--concurrency <n>', 'jobs processed at once by this process (WORKER_CONCURRENCY)', integerArg('--concurrency', 1))
    .action(serve);

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

  program
    .command('key')
    .description('manage API keys of the job API')
    .command('create')
    .requiredOption('--tenant <id>', 'tenant id')
    .requiredOption('--name <name>', 'key name, e.g. production, staging, ci')
    .option('--permissions <list>', `comma-separated: ${JOB_PERMISSIONS.join(',')}`, 'jobs:read,jobs:write')
    .option('--json', 'print one JSON object')
    .action(async (options: { tenant: string; name: string; permissions: string; json?: boolean }) => {
      const permissions = parsePermissions(options.permissions, JOB_PERMISSIONS);
      const { key, id } = await withRepositories(({ repos }) => new CredentialService(repos).createApiKey(options.tenant, options.name, permissions));
      print(options.json, { key, keyId: id, permissions }, `${key}\n(shown once: store it now)`);
    });

  program
    .command('client')
    .description('manage media-record API clients')
    .command('create')
    .requiredOption('--tenant <id>', 'tenant id')
    .option('--permissions <list>', `comma-separated: ${MEDIA_PERMISSIONS.join(',')}`, 'media:read,media:write')
    .option('--query-quota <n>', 'GET calls allowed per period', integerArg('--query-quota'))
    .option('--mutation-quota <n>', 'POST/DELETE calls allowed per period', integerArg('--mutation-quota'))
    .option('--quota-period-seconds <n>', 'length of a quota period', integerArg('--quota-period-seconds', 1), 86_400)
    .option('--json', 'print one JSON object')
    .action(async (options: { tenant: string; permissions: string; queryQuota?: number; mutationQuota?: number; quotaPeriodSeconds: number; json?: boolean }) => {
      const permissions = parsePermissions(options.permissions, MEDIA_PERMISSIONS);
      const created = await withRepositories(({ repos }) =>
        new CredentialService(repos).createMediaClient(options.tenant, permissions, {
          query: options.queryQuota ?? null,
          mutation: options.mutationQuota ?? null,
          periodSeconds: options.quotaPeriodSeconds,
        }),
      );
      print(options.json, { ...created, permissions }, `client id ${created.clientId}\nclient secret ${created.clientSecret}\n(the secret is shown once)`);
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
      const tenantRow = await withRepositories(({ transaction }) =>
        transaction(async (repos) => {
          if (!(await repos.tenants.find(options.tenant))) throw new Error(`no tenant ${options.tenant}`);
          await grantCredits(repos, options.tenant, options.amount, 'granted by operator');
          return (await repos.tenants.find(options.tenant))!;
        }),
      );
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

  registerClientCommands(program);
  return program;
}

buildProgram()
  .parseAsync()
  .catch((error: unknown) => {
    const message = error instanceof ConfigError ? `configuration error: ${error.message}` : error instanceof Error ? error.message : String(error);
    if (process.argv.includes('--json')) console.log(JSON.stringify({ error: message }));
    else console.error(`mediaproof: ${message}`);
    process.exit(1);
  });
