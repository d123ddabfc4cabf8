import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The run's temporary directory: everything a scenario generates lives
 * under it, and it is removed when the run ends, however it ends (normal
 * exit, an error, Ctrl-C).
 */
export class Workspace {
  readonly root: string;
  private removed = false;

  constructor() {
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-bench-'));
    const removeAndExit = (signal: NodeJS.Signals) => {
      this.dispose();
      process.kill(process.pid, signal);
    };
    process.once('exit', () => this.dispose());
    process.once('SIGINT', removeAndExit);
    process.once('SIGTERM', removeAndExit);
  }

  /** A new empty directory under the workspace. */
  directory(...parts: string[]): string {
    const directory = path.join(this.root, ...parts);
    fs.mkdirSync(directory, { recursive: true });
    return directory;
  }

  dispose(): void {
    if (this.removed) return;
    this.removed = true;
    removeTree(this.root);
  }
}

/**
 * Removes a directory tree with `rm -rf`: on trees of 100,000 files it is
 * several times faster than `fs.rmSync`, which matters for the run's length.
 */
export function removeTree(directory: string): void {
  const result = spawnSync('rm', ['-rf', '--', directory], { stdio: 'inherit' });
  if (result.status !== 0) fs.rmSync(directory, { recursive: true, force: true });
}

/** Copies a tree with `cp -a` (keeps modes and times). */
export function copyTree(from: string, to: string): void {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  const result = spawnSync('cp', ['-a', '--', from, to], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`cp -a ${from} ${to} failed with status ${result.status}`);
}

/** Total size of the regular files under `directory`: apparent bytes, and bytes of disk blocks allocated. */
export function treeBytes(directory: string): { bytes: number; diskBytes: number; files: number } {
  let bytes = 0;
  let diskBytes = 0;
  let files = 0;
  const walk = (current: string) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const stat = fs.statSync(full);
        bytes += stat.size;
        diskBytes += stat.blocks * 512;
        files += 1;
      }
    }
  };
  walk(directory);
  return { bytes, diskBytes, files };
}

/** Every regular file under `root` (relative POSIX path → size), to check that a rewind restored a tree. */
export function listFiles(root: string): Map<string, number> {
  const found = new Map<string, number>();
  const walk = (current: string, prefix: string) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isDirectory()) walk(full, relative);
      else if (entry.isFile()) found.set(relative, fs.statSync(full).size);
    }
  };
  walk(root, '');
  return found;
}

/**
 * Writes every dirty page of the machine to disk (`sync`), untimed, between
 * contenders: on a journaling filesystem (ext4 by default) an fsync waits for
 * the journal, which carries the other contender's unwritten metadata too, so
 * without this a contender that fsyncs would pay for the writes of the one
 * timed before it.
 */
export async function settleDisk(): Promise<void> {
  spawnSync('sync', [], { stdio: 'ignore' });
  // Let the cost of starting a process (cold caches) pass before the next timed step.
  await new Promise((resolve) => setTimeout(resolve, 100));
}

/**
 * Waits, untimed, until the given processes use no processor time for
 * `quietMs` (all their threads, from /proc), or `maxMs` passed. A contender
 * that stays alive between its turns (a session process holding a large
 * scope) goes on collecting garbage on its background threads after it
 * answered; on two cores that work, not the next contender's, took 25–90 ms
 * of a 10 ms journaled checkpoint timed right after it. Without /proc (not
 * Linux) it returns at once.
 */
export async function settleProcesses(pids: readonly number[], quietMs = 100, maxMs = 10_000): Promise<void> {
  const started = Date.now();
  let before = processorMs(pids);
  if (before === undefined) return;
  while (Date.now() - started < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const now = processorMs(pids);
    if (now === undefined || now - before < 1) return;
    before = now;
  }
}

/** Processor time of every thread of these processes (ms), or undefined without /proc. */
function processorMs(pids: readonly number[]): number | undefined {
  let total = 0;
  for (const pid of pids) {
    let tasks: string[];
    try {
      tasks = fs.readdirSync(`/proc/${pid}/task`);
    } catch {
      if (!fs.existsSync('/proc/self/task')) return undefined;
      continue; // exited
    }
    for (const task of tasks) {
      try {
        total += Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
      } catch {
        // The thread ended while we looked.
      }
    }
  }
  return total;
}
