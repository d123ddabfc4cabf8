import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointManager, RewindableError } from '../../src/index.js';
import { errnoError, instrumentFs } from './helpers/fs-instrument.js';
import { createSandbox, type Sandbox } from './helpers/sandbox.js';

/**
 * Minimal reproductions of problems the durability tests found in files the
 * durability work may not change. Each is marked `it.fails`: it passes while
 * the problem is there, and starts failing the day it is fixed, as a prompt to
 * drop the marker.
 */

const sandboxes: Sandbox[] = [];
afterEach(() => {
  while (sandboxes.length > 0) sandboxes.pop()!.dispose();
});

async function failingOnce<T>(work: () => Promise<T>): Promise<unknown> {
  // The project file is opened (read-only, no-follow) to be backed up; that open fails.
  let failed = false;
  const restore = instrumentFs(['openSync'], (name, args) => {
    if (!failed && String(args[0]).endsWith('/a.txt')) {
      failed = true;
      return errnoError('EIO', name);
    }
    return undefined;
  });
  try {
    await work();
    return undefined;
  } catch (error) {
    return error;
  } finally {
    restore();
  }
}

describe('known gaps (reported; fixes belong to checkpoint-manager.ts, errors.ts, paths.ts, session/ or tools/)', () => {
  // An I/O error while reading a project file to back it up escapes trackEdit() and checkpoint()
  // as the raw errno error (from fs/inspect-path.ts through session/observe-path.ts, and from
  // paths.ts canonicalLocation). No RewindableError code fits ("STORE_IO" is the store); the fix
  // is a code such as FILE_IO in errors.ts and a wrapper where checkpoint-manager.ts observes files.
  // Nothing is lost meanwhile: the call rejects, nothing is recorded, the fault sweep checks that.
  it.fails('trackEdit() rejects with a RewindableError when reading the file fails', async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    sandbox.writeFiles({ 'a.txt': 'a\n' });
    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store });
    await manager.checkpoint();
    const error = await failingOnce(() => manager.trackEdit('a.txt'));
    await manager.close();
    expect(error).toBeDefined();
    expect(RewindableError.isInstance(error), String(error)).toBe(true);
  });

  it.fails('checkpoint() rejects with a RewindableError when reading a tracked file fails', async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    sandbox.writeFiles({ 'a.txt': 'a\n' });
    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store });
    await manager.checkpoint();
    await manager.trackEdit('a.txt');
    sandbox.writeFiles({ 'a.txt': 'changed\n' });
    const error = await failingOnce(() => manager.checkpoint());
    await manager.close();
    expect(error).toBeDefined();
    expect(RewindableError.isInstance(error), String(error)).toBe(true);
  });

  // tools/tracked-write.ts calls directory.isStillAtPath() after the backup, outside any try: since
  // an I/O error there is thrown rather than read as "moved" (fs/pinned-directory.ts), it escapes raw
  // and leaves the prepared temporary file behind. Fix: catch, prepared.discard(), throw asToolError().
  it.fails('the Write tool meeting an I/O error after the backup throws a typed error and leaves no temporary file', async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    sandbox.writeFiles({ 'a.txt': 'a\n' });
    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' });
    await manager.checkpoint();
    // The directory's identity is read three times: opening the target, tracking, and after the backup.
    let reads = 0;
    const restore = instrumentFs(['readlinkSync'], (name) => ((reads += 1) === 3 ? errnoError('EIO', name) : undefined));
    let error: unknown;
    try {
      await manager.tools.write({ file_path: 'a.txt', content: 'b\n' });
    } catch (caught) {
      error = caught;
    } finally {
      restore();
    }
    await manager.close();
    expect(error).toBeDefined();
    expect(fs.readdirSync(sandbox.root)).toEqual(['a.txt']);
    expect(RewindableError.isInstance(error), String(error)).toBe(true);
  });
});
