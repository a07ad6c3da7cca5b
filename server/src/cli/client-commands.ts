/**
 * The end-user commands of the `mediaproof` program, built on @mediaproof/sdk:
 * analyze, jobs, task-types and completion. They talk to a running service
 * (MEDIAPROOF_URL, MEDIAPROOF_API_KEY or the config file); the operator commands in
 * main.ts open the database instead.
 */
import type { Command, CommanderError } from 'commander';
import { registerAnalyzeCommand } from './analyze.js';
import { registerCompletionCommand } from './completion.js';
import { registerJobCommands } from './jobs.js';
import { EXIT } from './output.js';

/** Usage errors exit 64, not commander's 1, which `analyze` uses for "manipulated". */
function usageExitCodes(command: Command): void {
  command.exitOverride((error: CommanderError) => {
    process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
  });
  for (const sub of command.commands) usageExitCodes(sub);
}

export function registerClientCommands(program: Command): void {
  const before = new Set(program.commands);
  registerAnalyzeCommand(program);
  registerJobCommands(program);
  registerCompletionCommand(program);
  for (const command of program.commands) if (!before.has(command)) usageExitCodes(command);
  program.addHelpText('after', `
Client commands (analyze, jobs, task-types) read MEDIAPROOF_URL and MEDIAPROOF_API_KEY,
or ~/.config/mediaproof/config.json ({"url": "...", "apiKey": "api_..."}; MEDIAPROOF_CONFIG overrides the path).`);
}
