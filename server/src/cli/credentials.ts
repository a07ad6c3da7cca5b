/**
 * Where the end-user commands find the service and the API key: MEDIAPROOF_URL and
 * MEDIAPROOF_API_KEY first, then the config file (~/.config/mediaproof/config.json, or
 * $XDG_CONFIG_HOME/mediaproof/config.json, or the path in MEDIAPROOF_CONFIG).
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Mediaproof, DEFAULT_BASE_URL } from '@mediaproof/sdk';

export interface ClientConfig {
  apiKey: string;
  url: string;
  /** Where each value came from, for error messages. */
  configPath: string;
}

/** A problem with the user's setup (exit code 4). */
export class CliConfigError extends Error {
  override name = 'CliConfigError';
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MEDIAPROOF_CONFIG) return env.MEDIAPROOF_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'mediaproof', 'config.json');
}

export function loadClientConfig(env: NodeJS.ProcessEnv = process.env): ClientConfig {
  const path = configPath(env);
  let file: { apiKey?: unknown; url?: unknown } = {};
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    // A missing file is fine (the environment may hold everything); an unreadable one is not.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new CliConfigError(`cannot read the config file ${path}: ${(error as Error).message}`);
  }
  if (text !== undefined) {
    try {
      file = JSON.parse(text) as typeof file;
    } catch {
      throw new CliConfigError(`the config file ${path} is not valid JSON`);
    }
  }
  const apiKey = env.MEDIAPROOF_API_KEY || (typeof file.apiKey === 'string' ? file.apiKey : '');
  const url = env.MEDIAPROOF_URL || (typeof file.url === 'string' ? file.url : '') || DEFAULT_BASE_URL;
  if (!apiKey) {
    throw new CliConfigError(`no API key: set MEDIAPROOF_API_KEY, or write {"apiKey": "api_…", "url": "${url}"} to ${path}`);
  }
  return { apiKey, url, configPath: path };
}

export function clientFromEnvironment(env: NodeJS.ProcessEnv = process.env): Mediaproof {
  const config = loadClientConfig(env);
  return new Mediaproof({ apiKey: config.apiKey, baseUrl: config.url });
}
