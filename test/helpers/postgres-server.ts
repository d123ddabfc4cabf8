/**
 * A throwaway PostgreSQL server for tests and benchmarks: a fresh cluster
 * (`initdb`) in a temp directory, started with `pg_ctl` on a free loopback
 * port, stopped and removed by `destroy()`.
 *
 * PostgreSQL refuses to run as root, so when this process is root the cluster
 * belongs to an unprivileged user (`postgres` where it exists, else `nobody`)
 * and every server command runs as that user; otherwise it runs as us.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface PostgresServer {
  /** `postgres://…` for the cluster's superuser, database `postgres`. */
  readonly connectionString: string;
  readonly port: number;
  readonly directory: string;
  /**
   * Stops the server, keeping its data. `fast` (the default) cuts open
   * connections and shuts down cleanly; `immediate` kills every server
   * process at once, as a crash would (the next start recovers from the WAL).
   */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port, with the same data. */
  start(): Promise<void>;
  /** Stops the server and deletes the cluster. */
  destroy(): Promise<void>;
}

export interface StartPostgresOptions {
  /**
   * Server settings (`-c name=value`). Tests pass `fsync: 'off'` and the like
   * for speed; the benchmark keeps PostgreSQL's durable defaults.
   */
  settings?: Record<string, string>;
}

/** Settings that make a test cluster fast; never for data that matters. */
export const fastTestSettings: Record<string, string> = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' };

const liveServers = new Set<{ dataDirectory: string; run: RunAs }>();
process.once('exit', () => {
  // The test runner died before afterAll: do not leave a server running.
  for (const server of liveServers) server.run.commandSync('pg_ctl', ['stop', '-D', server.dataDirectory, '-m', 'immediate', '-w']);
});

export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const binaries = findBinaries();
  const run = runAs(binaries, serverUser());
  const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-pg-')));
  const dataDirectory = path.join(directory, 'data');
  const logFile = path.join(directory, 'server.log');
  fs.chmodSync(directory, 0o700);
  if (run.user !== undefined) fs.chownSync(directory, run.user.uid, run.user.gid);
  const superuser = 'rewindable';
  await run.command('initdb', ['-D', dataDirectory, '-U', superuser, '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync'], directory);
  const port = await freePort();
  const settings = { listen_addresses: '127.0.0.1', port: String(port), unix_socket_directories: '', max_connections: '60', ...options.settings };
  const serverOptions = Object.entries(settings)
    .map(([name, value]) => `-c ${name}=${value === '' ? "''" : value}`)
    .join(' ');
  const entry = { dataDirectory, run };
  let running = false;
  const server: PostgresServer = {
    connectionString: `postgres://${superuser}@127.0.0.1:${port}/postgres`,
    port,
    directory,
    async start() {
      if (running) return;
      await run.command('pg_ctl', ['start', '-D', dataDirectory, '-l', logFile, '-w', '-t', '60', '-o', serverOptions], directory, logFile);
      running = true;
      liveServers.add(entry);
    },
    async stop(mode = 'fast') {
      if (!running) return;
      await run.command('pg_ctl', ['stop', '-D', dataDirectory, '-m', mode, '-w', '-t', '60'], directory, logFile);
      running = false;
      liveServers.delete(entry);
    },
    async destroy() {
      try {
        await server.stop();
      } finally {
        fs.rmSync(directory, { recursive: true, force: true });
      }
    },
  };
  try {
    await server.start();
  } catch (error) {
    fs.rmSync(directory, { recursive: true, force: true });
    throw error;
  }
  return server;
}

/**
 * Kills the server as a crash would (`pg_ctl stop -m immediate`) and starts it
 * again. A CHECKPOINT first: `fastTestSettings` acknowledge a commit before its
 * WAL is written, and the crash would take the latest ones along.
 */
export async function crashAndRestart(server: PostgresServer, admin: { query(sql: string): Promise<unknown> }): Promise<void> {
  await admin.query('CHECKPOINT');
  await server.stop('immediate');
  await server.start();
}

interface Binaries {
  directory: string;
}

function findBinaries(): Binaries {
  const candidates = [process.env.REWINDABLE_PG_BIN, pgConfigBinDirectory(), '/usr/lib/postgresql/15/bin'];
  for (const directory of candidates) {
    if (directory !== undefined && fs.existsSync(path.join(directory, 'initdb')) && fs.existsSync(path.join(directory, 'pg_ctl'))) return { directory };
  }
  throw new Error(
    'PostgreSQL server binaries (initdb, pg_ctl) were not found. Install PostgreSQL 15 (Debian: apt-get install postgresql-15) ' +
      'or set REWINDABLE_PG_BIN to the directory that holds them.',
  );
}

function pgConfigBinDirectory(): string | undefined {
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

interface ServerUser {
  uid: number;
  gid: number;
  home: string;
}

/** Root may not run PostgreSQL: pick an unprivileged account to own the cluster. */
function serverUser(): ServerUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    const line = fs
      .readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith(`${name}:`));
    if (line === undefined) continue;
    const fields = line.split(':');
    return { uid: Number(fields[2]), gid: Number(fields[3]), home: os.tmpdir() };
  }
  throw new Error('Running as root, and neither a "postgres" nor a "nobody" account exists to run the test PostgreSQL server as.');
}

interface RunAs {
  user: ServerUser | undefined;
  command(program: string, args: string[], cwd: string, logFile?: string): Promise<void>;
  commandSync(program: string, args: string[]): void;
}

function runAs(binaries: Binaries, user: ServerUser | undefined): RunAs {
  const spawnOptions = (cwd: string) => ({
    cwd,
    // A clean environment: PG* variables of the caller must not point the tools elsewhere.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: user?.home ?? os.homedir(), LC_ALL: 'C' },
    ...(user !== undefined ? { uid: user.uid, gid: user.gid } : {}),
  });
  return {
    user,
    async command(program, args, cwd, logFile) {
      const child = spawn(path.join(binaries.directory, program), args, { ...spawnOptions(cwd), stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((resolve, reject) => {
        child.on('error', reject);
        child.on('close', resolve);
      });
      if (code !== 0) {
        const log = logFile !== undefined && fs.existsSync(logFile) ? `\nserver log:\n${fs.readFileSync(logFile, 'utf8').slice(-4000)}` : '';
        throw new Error(`${program} ${args.join(' ')} exited with ${code}:\n${output}${log}`);
      }
    },
    commandSync(program, args) {
      spawnSync(path.join(binaries.directory, program), args, { ...spawnOptions(os.tmpdir()), stdio: 'ignore' });
    },
  };
}

/** A port nobody listens on right now (the server binds it a moment later). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(port));
    });
  });
}
