import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeProjectKey } from '../../../src/index.js';
import type { FileSet } from './crash-scenario.js';

/** A project directory, a store and an outside directory, under one real temp directory. */
export interface Sandbox {
  base: string;
  root: string;
  store: string;
  outside: string;
  /** Writes files (latin1 strings: every byte value round-trips). */
  writeFiles(files: FileSet): void;
  /** Every regular file under the project (temporary files of atomic writes aside), as latin1 strings. */
  files(): FileSet;
  /** Names of leftover temporary files of atomic writes under the project. */
  temporaryFiles(): string[];
  logPath(sessionId: string): string;
  dispose(): void;
}

/** The names `writeFileAtomically` gives its temporary files. */
export const temporaryFilePattern = /^\..*\.[0-9a-f]{12}\.rewindable-tmp$/;

export function createSandbox(prefix = 'rewindable-durability-', parent = os.tmpdir()): Sandbox {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(parent, prefix)));
  const root = path.join(base, 'project');
  const store = path.join(base, 'store');
  const outside = path.join(base, 'outside');
  for (const directory of [root, store, outside]) fs.mkdirSync(directory);
  return {
    base,
    root,
    store,
    outside,
    writeFiles(files) {
      for (const [relative, content] of Object.entries(files)) {
        const file = path.join(root, relative);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, Buffer.from(content, 'latin1'));
      }
    },
    files: () => projectFiles(root),
    temporaryFiles() {
      const found: string[] = [];
      walk(root, (relative, _full, entry) => {
        if (temporaryFilePattern.test(entry.name)) found.push(relative);
      });
      return found;
    },
    logPath: (sessionId) => path.join(store, 'projects', encodeProjectKey(root), `${sessionId}.jsonl`),
    dispose: () => fs.rmSync(base, { recursive: true, force: true }),
  };
}

/** Every regular file under `root` (temporary files of atomic writes aside), as latin1 strings; links and others by kind. */
export function projectFiles(root: string): FileSet {
  const found: FileSet = {};
  walk(root, (relative, full, entry) => {
    if (temporaryFilePattern.test(entry.name)) return;
    found[relative] = entry.isFile() ? fs.readFileSync(full).toString('latin1') : `<${entry.isSymbolicLink() ? 'symlink' : 'special'}>`;
  });
  return found;
}

function walk(root: string, visit: (relative: string, full: string, entry: fs.Dirent) => void): void {
  const descend = (directory: string) => {
    for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) descend(full);
      else visit(path.relative(root, full), full, entry);
    }
  };
  descend(root);
}

/** The log's complete lines, parsed leniently (no checksum check): what the test reads to know how far a run got. */
export function readLogRecords(logPath: string): Array<Record<string, unknown>> {
  let text: string;
  try {
    text = fs.readFileSync(logPath, 'utf8');
  } catch {
    return [];
  }
  const records: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n').slice(0, -1)) {
    try {
      records.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // A damaged line; the library decides what it means.
    }
  }
  return records;
}

/**
 * A sandbox on a memory filesystem (/dev/shm) when the machine has one, for the sweeps whose outcome cannot
 * depend on a flush reaching the disk: a SIGKILL leaves the page cache as it is, so the reopening process reads
 * what it would read from a disk, and an injected fault fails a call before it is made. The library makes the same
 * calls there (tmpfs has the nanosecond timestamps of ext4); only its flushes, about 3.5 ms each on the disk of a
 * 2-core CI machine, cost nothing. A sweep replays its operation hundreds of times, flushing dozens of times each.
 */
export function createMemorySandbox(): Sandbox {
  return createSandbox('rewindable-sweep-', memoryFilesystem() ?? os.tmpdir());
}

function memoryFilesystem(): string | undefined {
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    return fs.statSync('/dev/shm').isDirectory() ? '/dev/shm' : undefined;
  } catch {
    return undefined;
  }
}
