/**
 * A private PostgreSQL cluster for the tests: `initdb` into a temporary directory and
 * `pg_ctl` on a free loopback port, with the binaries of the installed PostgreSQL. A user's
 * `npm test` never touches the machine's own PostgreSQL service: it neither writes to it nor
 * stops it; the fault tests stop and restart only this cluster. Without PostgreSQL binaries
 * the suites that need one skip with a message.
 *
 * PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` system
 * user (through `runuser`), in a directory handed to that user.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../helpers.js';

const run = promisify(execFile);

export interface PrivatePostgres {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/<database>, trust auth. */
  url(database?: string): string;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** The newest installed PostgreSQL's bin directory holding initdb and pg_ctl, if any. */
export function postgresBinaries(): string | null {
  const candidates: string[] = [];
  if (existsSync('/usr/lib/postgresql')) {
    for (const version of readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))) candidates.push(`/usr/lib/postgresql/${version}/bin`);
  }
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir) candidates.push(dir);
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) ?? null;
}

/** How to run the server binaries: as `postgres` through runuser when we are root. */
function runner(): { owner: { uid: number; gid: number } | null; wrap(command: string, args: string[]): [string, string[]] } {
  if (process.getuid?.() !== 0) return { owner: null, wrap: (command, args) => [command, args] };
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { owner: { uid: id('-u'), gid: id('-g') }, wrap: (command, args) => ['runuser', ['-u', 'postgres', '--', command, ...args]] };
}

let cluster: Promise<PrivatePostgres> | undefined;

/** One cluster per test process, started on first use and removed when the process exits. */
export function privatePostgres(): Promise<PrivatePostgres> {
  cluster ??= startCluster();
  return cluster;
}

async function startCluster(): Promise<PrivatePostgres> {
  const bin = postgresBinaries();
  if (!bin) throw new Error('no PostgreSQL binaries (initdb, pg_ctl) are installed');
  const { owner, wrap } = runner();
  const root = mkdtempSync(join(tmpdir(), 'mediaproof-pg-'));
  const data = join(root, 'data');
  if (owner) chownSync(root, owner.uid, owner.gid);
  const exec = (command: string, args: string[]) => {
    const [file, argv] = wrap(join(bin, command), args);
    return run(file, argv, { cwd: root });
  };
  await exec('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
  const port = await freePort();
  // Durability is not what these tests measure: fsync off keeps them fast on a shared disk.
  const options = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${root} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const start = async () => {
    await exec('pg_ctl', ['-D', data, '-l', join(root, 'server.log'), '-o', options, '-w', '-t', '60', 'start']);
  };
  const stop = async () => {
    await exec('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  };
  await start();
  const destroy = () => {
    try {
      const [file, argv] = wrap(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      execFileSync(file, argv, { stdio: 'ignore' });
    } catch {
      // already stopped
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', destroy);
  return {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start,
    stop,
    async destroy() {
      process.removeListener('exit', destroy);
      destroy();
    },
  };
}

/** Whether a private cluster can be had here; the reason to skip otherwise (printed once). */
export async function privatePostgresSkipReason(): Promise<string | false> {
  try {
    await privatePostgres();
    return false;
  } catch (error) {
    const reason = `no private PostgreSQL cluster could be started: skipping (${(error as Error).message.split('\n')[0]})`;
    console.log(`# ${reason}`);
    return reason;
  }
}
