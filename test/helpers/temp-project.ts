import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterEach } from 'vitest';
import { CheckpointManager, type CheckpointManagerOptions } from '../../src/index.js';

export interface TempProject {
  /** Real path of the project directory. */
  root: string;
  /** Store directory (outside the project). */
  store: string;
  /** A directory outside the project, for canaries and link targets. */
  outside: string;
  file(relative: string): string;
  write(relative: string, content: string | Buffer, mode?: number): string;
  read(relative: string): Buffer;
  exists(relative: string): boolean;
  open(options?: Partial<CheckpointManagerOptions>): Promise<CheckpointManager>;
  /** Every regular file and link under the project: relative path -> bytes (or `-> target` for links). */
  snapshot(directory?: string): Record<string, string>;
}

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

export function tempProject(): TempProject {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-test-')));
  const root = path.join(base, 'project');
  const store = path.join(base, 'store');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
  const managers: CheckpointManager[] = [];
  cleanups.push(async () => {
    for (const manager of managers) await manager.close().catch(() => {});
    fs.rmSync(base, { recursive: true, force: true });
  });
  const file = (relative: string) => path.join(root, relative);
  return {
    root,
    store,
    outside,
    file,
    write(relative, content, mode) {
      const target = file(relative);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, content);
      if (mode !== undefined) fs.chmodSync(target, mode);
      return target;
    },
    read: (relative) => fs.readFileSync(file(relative)),
    exists: (relative) => fs.existsSync(file(relative)),
    async open(options = {}) {
      const manager = await CheckpointManager.open({ cwd: root, storeDir: store, durability: 'none', ...options });
      managers.push(manager);
      return manager;
    },
    snapshot(directory = root) {
      return snapshotTree(directory);
    },
  };
}

export function snapshotTree(directory: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (current: string) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      const relative = path.relative(directory, full);
      if (entry.isSymbolicLink()) out[relative] = `-> ${fs.readlinkSync(full)}`;
      else if (entry.isDirectory()) {
        out[`${relative}/`] = `dir ${(fs.statSync(full).mode & 0o7777).toString(8)}`;
        walk(full);
      } else if (entry.isFile()) out[relative] = `${(fs.statSync(full).mode & 0o7777).toString(8)} ${fs.readFileSync(full).toString('base64')}`;
      else out[relative] = 'special';
    }
  };
  walk(directory);
  return out;
}

export const newId = (): string => randomUUID();
