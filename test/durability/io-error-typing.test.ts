import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointManager, RewindableError } from '../../src/index.js';
import { errnoError, instrumentFs } from './helpers/fs-instrument.js';
import { createSandbox, type Sandbox } from './helpers/sandbox.js';

/**
 * I/O errors reading project files surface as typed errors (FILE_IO, or
 * TOOL_FAILED from a tool) and leave nothing behind. First written as
 * reproductions of problems the durability tests found; kept as regressions.
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

describe('I/O errors reading project files are typed and leave nothing behind', () => {
  // An I/O error while reading a project file to back it up: FILE_IO, and nothing is recorded.
  it('trackEdit() rejects with a RewindableError when reading the file fails', async () => {
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

  it('checkpoint() rejects with a RewindableError when reading a tracked file fails', async () => {
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

  // An I/O error while re-checking the directory after the backup: the temporary file is discarded.
  it('the Write tool meeting an I/O error after the backup throws a typed error and leaves no temporary file', async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    sandbox.writeFiles({ 'a.txt': 'a\n', 'probe.txt': 'p\n' });
    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' });
    await manager.checkpoint();
    // The last time the tool reads its directory's identity is the check right before the rename:
    // count the reads of the same write on another file, then fail the last one.
    let probeReads = 0;
    const count = instrumentFs(['readlinkSync'], () => {
      probeReads += 1;
      return undefined;
    });
    try {
      await manager.tools.write({ file_path: 'probe.txt', content: 'q\n' });
    } finally {
      count();
    }
    let reads = 0;
    const restore = instrumentFs(['readlinkSync'], (name) => ((reads += 1) === probeReads ? errnoError('EIO', name) : undefined));
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
    expect(fs.readdirSync(sandbox.root).sort()).toEqual(['a.txt', 'probe.txt']);
    expect(fs.readFileSync(`${sandbox.root}/a.txt`, 'utf8')).toBe('a\n');
    expect(RewindableError.isInstance(error), String(error)).toBe(true);
  });
});
