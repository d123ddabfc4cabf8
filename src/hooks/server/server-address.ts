import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { version } from '../../../package.json';

/**
 * What one resident hook server serves: one store and one project (as given,
 * and as its real path), with its extra roots. Two projects never share a
 * server, nor two stores.
 */
export interface ServerTarget {
  storeDir: string;
  /** The project directory as the hook was given it (absolute), and its real path. */
  project: string;
  projectReal: string;
  extraRoots: string[];
}

/** Why no server can be used: the caller handles the event in its own process instead. */
export class HookServerUnavailable extends Error {
  override readonly name = 'HookServerUnavailable';
}

/**
 * The directory of the servers' sockets: `$XDG_RUNTIME_DIR/rewindable`, else
 * `<tmpdir>/rewindable-<uid>`, created with mode 0700. Anyone who can connect
 * to a socket can have files backed up and scanned as this user, so a
 * directory that is a link, is not ours, or that others may enter is refused.
 */
export function socketDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const uid = process.getuid?.();
  if (uid === undefined) throw new HookServerUnavailable('resident hook servers need Unix sockets and user ids');
  const runtime = env.XDG_RUNTIME_DIR;
  const directory = runtime !== undefined && runtime !== '' && path.isAbsolute(runtime) ? path.join(runtime, 'rewindable') : path.join(os.tmpdir(), `rewindable-${uid}`);
  try {
    fs.mkdirSync(directory, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new HookServerUnavailable(`cannot create ${directory}: ${(error as Error).message}`);
  }
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(directory);
  } catch (error) {
    throw new HookServerUnavailable(`cannot read ${directory}: ${(error as Error).message}`);
  }
  if (stat.isSymbolicLink()) throw new HookServerUnavailable(`${directory} is a symbolic link`);
  if (!stat.isDirectory()) throw new HookServerUnavailable(`${directory} is not a directory`);
  if (stat.uid !== uid) throw new HookServerUnavailable(`${directory} belongs to user ${stat.uid}, not ${uid}`);
  if ((stat.mode & 0o077) !== 0) throw new HookServerUnavailable(`${directory} has mode ${(stat.mode & 0o777).toString(8)}: others may use it (0700 is required)`);
  return directory;
}

/** The socket of the server for `target`, in `directory`: named by a hash of the target and the package version. */
export function socketPathOf(directory: string, target: ServerTarget): string {
  const key = JSON.stringify([version, target.storeDir, target.project, target.projectReal, target.extraRoots]);
  return path.join(directory, `${createHash('sha256').update(key).digest('hex').slice(0, 24)}.sock`);
}

/**
 * This build of rewindable: the version, and the script Node runs (its path
 * and modification time), so a server started by an older build of the same
 * version is told apart and replaced.
 */
export function buildId(): string {
  const script = process.argv[1] ?? '';
  let stamp = '';
  try {
    stamp = String(fs.statSync(script).mtimeMs);
  } catch {
    // No script file: the version alone.
  }
  return `${version} ${script} ${stamp}`;
}

/** One request on a server's socket, a line of JSON; each connection carries one request and its reply. */
export type ServerRequest =
  /** `earlyScan: false` (`REWINDABLE_HOOK_EARLY_SCAN=off`): a session's first scan waits for its first Bash hook. */
  | { type: 'event'; build: string; text: string; lockWaitMs: number; earlyScan?: boolean }
  | { type: 'status' }
  | { type: 'stop' };

export interface ServerStatus {
  type: 'status';
  pid: number;
  build: string;
  target: ServerTarget;
  startedAt: string;
  /** Milliseconds since the last event ended (0 while one is handled). */
  idleMs: number;
  events: number;
  /**
   * Sessions' first scans run after their first prompt, ahead of their first Bash hook (`completed`), and the
   * times one gave way to an event that did not need it (`stopped`), stopped or kept from starting.
   */
  earlyScans?: { completed: number; stopped?: number };
}

/** What a server answers: the hook's answer, a request to start a server of this build instead, its status, or that it stops. */
export type ServerReply =
  | { type: 'answer'; answer: { exitCode: 0 | 1 | 2; stdout?: string; stderr?: string } }
  | { type: 'restart' }
  | ServerStatus
  | { type: 'stopping' };

/** Every socket in the directory (for `rewindable hooks status` and `stop`). */
export function listSockets(directory: string): string[] {
  return fs
    .readdirSync(directory)
    .filter((name) => name.endsWith('.sock'))
    .sort()
    .map((name) => path.join(directory, name));
}
