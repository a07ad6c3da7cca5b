/**
 * The `mediaproof` program: `serve` (with --role all | api | worker), the operator commands
 * of DESIGN.md §7 (cli/operator-commands.ts) and the client commands (cli/client-commands.ts).
 */
import { Command, Option } from 'commander';
import { ConfigError, loadConfig } from './config.js';
import type { Role } from './runtime.js';
import { createOpsServer } from './ops-server.js';
import { registerClientCommands } from './cli/client-commands.js';
import { integerArg, registerOperatorCommands } from './cli/operator-commands.js';

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
    // Commands that reach this very database, from any directory.
    const reach = config.databaseUrl ? 'DATABASE_URL=<the same URL> ' : `DATA_DIR=${config.dataDir} `;
    process.stderr.write(
      `\nmediaproof is listening on ${config.publicUrl} (role ${options.role}, ${storage}).\n` +
        `Create a first tenant and API key (in the repository, or with the installed mediaproof command):\n` +
        `  ${reach}npm run -s cli -- tenant create --name acme --credits 100 --json\n` +
        `  ${reach}npm run -s cli -- key create --tenant <tenantId> --name dev --permissions jobs:read,jobs:write,jobs:delete --json\n\n`,
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

  registerOperatorCommands(program);
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
