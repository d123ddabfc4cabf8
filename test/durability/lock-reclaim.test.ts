import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointManager, encodeProjectKey, listSessions, RewindableError } from '../../src/index.js';
import { runWorker } from '../helpers/child.js';
import { instrumentFs } from './helpers/fs-instrument.js';
import { createSandbox, type Sandbox } from './helpers/sandbox.js';

/**
 * A lock no live process holds is reclaimed, including one that names no
 * process at all (empty or garbage, as a power cut between creating and
 * filling it could leave); a lock is on disk complete before its name is;
 * and the lock's own I/O failures are STORE_IO errors that say what to do.
 */

const sandboxes: Sandbox[] = [];
afterEach(() => {
  while (sandboxes.length > 0) sandboxes.pop()!.dispose();
});

async function newSession(): Promise<{ sandbox: Sandbox; sessionId: string; lockPath: string }> {
  const sandbox = createSandbox();
  sandboxes.push(sandbox);
  const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' });
  await manager.checkpoint();
  await manager.close();
  const lockPath = path.join(sandbox.store, 'projects', encodeProjectKey(sandbox.root), `${manager.sessionId}.lock`);
  return { sandbox, sessionId: manager.sessionId, lockPath };
}

describe('a lock that names no live process is reclaimed', () => {
  for (const [label, content] of [
    ['left empty', ''],
    ['cut short', '{"pid":12'],
    ['of binary garbage', '\0\0\0\0'],
    ['of JSON naming no process', '{"note":"not a lock"}'],
    ['stating a lease out of range', JSON.stringify({ pid: 4242, hostname: 'elsewhere', processStart: null, token: 't', acquiredAt: new Date().toISOString(), leaseMs: 1e300 })],
    ['naming a pid out of range', JSON.stringify({ pid: 1e300, hostname: 'elsewhere', processStart: null, token: 't', acquiredAt: new Date().toISOString(), leaseMs: 60_000 })],
  ] as const) {
    it(`a lock file ${label} is reclaimed, and the reclaimer then holds the session against another process`, async () => {
      const { sandbox, sessionId, lockPath } = await newSession();
      fs.writeFileSync(lockPath, content);

      const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none', resume: sessionId });
      const other = runWorker({ options: { cwd: sandbox.root, storeDir: sandbox.store, durability: 'none', resume: sessionId }, steps: [] });
      const { lines } = await other.done;
      expect(lines.at(-1)).toMatchObject({ error: { code: 'SESSION_LOCKED', message: expect.stringContaining(`process ${process.pid}`) } });
      await manager.close();
      expect(fs.existsSync(lockPath)).toBe(false);
    });
  }
});

describe('a lock path that holds what no holder writes is reclaimed, never followed', () => {
  it('a lock that is a symbolic link is reclaimed: the link is removed, what it leads to is left as it was, and the reclaimer then holds the session', async () => {
    const { sandbox, sessionId, lockPath } = await newSession();
    const target = path.join(sandbox.outside, 'elsewhere');
    fs.writeFileSync(target, 'not the store’s');
    fs.symlinkSync(target, lockPath);

    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none', resume: sessionId });

    expect(fs.lstatSync(lockPath).isFile()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('not the store’s');
    await expect(CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none', resume: sessionId })).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
    await manager.close();
  });

  it('a lock that is a FIFO is reclaimed without waiting on it', async () => {
    const { sandbox, sessionId, lockPath } = await newSession();
    expect(spawnSync('mkfifo', [lockPath]).status).toBe(0);

    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none', resume: sessionId });

    expect(fs.lstatSync(lockPath).isFile()).toBe(true);
    await manager.close();
  });
});

describe('the store never follows a link in its projects folder', () => {
  it('a project folder in the store that is a link: opening, resuming and listing fail with STORE_IO saying so, and nothing is written where it leads', async () => {
    const { sandbox, sessionId } = await newSession();
    const folder = path.dirname(sandbox.logPath(sessionId));
    const elsewhere = path.join(sandbox.outside, 'sessions');
    fs.renameSync(folder, elsewhere);
    fs.symlinkSync(elsewhere, folder);
    const before = fs.readdirSync(elsewhere).sort();

    const attempts = [
      CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' }),
      CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none', resume: sessionId }),
      CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, readOnly: true, resume: sessionId }),
      listSessions({ cwd: sandbox.root, storeDir: sandbox.store }),
    ];
    for (const attempt of attempts) {
      await expect(attempt).rejects.toMatchObject({ code: 'STORE_IO', message: expect.stringContaining(`${folder}, is a symbolic link: the store never follows links`) });
    }
    expect(fs.readdirSync(elsewhere).sort()).toEqual(before);
  });
});

describe('a lock is on disk with its content before it becomes visible', () => {
  it('the lock file is flushed before it is linked into place', async () => {
    const { sandbox, sessionId, lockPath } = await newSession();
    const pathOfFd = new Map<number, string>();
    const flushed = new Set<string>();
    const linkedUnflushed: string[] = [];
    const restore = instrumentFs(
      ['fsync', 'linkSync'],
      (name, args) => {
        if (name === 'fsync') flushed.add(pathOfFd.get(args[0] as number) ?? '');
        if (name === 'linkSync' && args[1] === lockPath && !flushed.has(String(args[0]))) linkedUnflushed.push(String(args[0]));
        return undefined;
      },
    );
    const restoreOpen = instrumentFs(['openSync'], () => undefined, (_name, args, result) => pathOfFd.set(result as number, String(args[0])));
    try {
      const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: sessionId });
      await manager.close();
    } finally {
      restoreOpen();
      restore();
    }
    expect([...flushed].some((file) => file.startsWith(`${lockPath}.`))).toBe(true);
    expect(linkedUnflushed).toEqual([]);
  });
});

describe("the lock's I/O failures are STORE_IO errors", () => {
  it('a read-only store: STORE_IO saying so, with the original error as cause', async () => {
    const { sandbox, sessionId, lockPath } = await newSession();
    const readOnly = Object.assign(new Error('EROFS: read-only file system, open'), { code: 'EROFS', errno: -30, syscall: 'open' });
    const restore = instrumentFs(['openSync'], (_name, args) => (String(args[0]).startsWith(`${lockPath}.`) ? readOnly : undefined));
    let failure: unknown;
    try {
      await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: sessionId });
    } catch (error) {
      failure = error;
    } finally {
      restore();
    }
    expect(RewindableError.isInstance(failure), String(failure)).toBe(true);
    expect(failure).toMatchObject({ code: 'STORE_IO', message: expect.stringContaining('read-only filesystem'), cause: readOnly });
    expect(fs.existsSync(lockPath)).toBe(false);
  });

  it('a store path that is a file: STORE_IO for a new session, a resumed one and the session list', async () => {
    const { sandbox, sessionId } = await newSession();
    const file = path.join(path.dirname(sandbox.store), 'not-a-directory');
    fs.writeFileSync(file, 'x');
    const opening = [
      CheckpointManager.open({ cwd: sandbox.root, storeDir: file }),
      CheckpointManager.open({ cwd: sandbox.root, storeDir: file, resume: sessionId }),
      listSessions({ cwd: sandbox.root, storeDir: file }),
    ];
    for (const attempt of opening) {
      const failure = await attempt.then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: 'STORE_IO', message: expect.stringContaining('not a directory'), cause: expect.objectContaining({ code: 'ENOTDIR' }) });
    }
  });
});
