import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointManager, RewindableError } from '../../src/index.js';
import { errnoError, instrumentFs, type CallName } from './helpers/fs-instrument.js';
import { createSandbox, type Sandbox } from './helpers/sandbox.js';

/**
 * Targeted cases the fault-injection sweep found, each on its own so a
 * regression names itself: an I/O error is an error, never a safety verdict,
 * and a failed step never leaves the session promising what it cannot keep.
 */

const first = '00000000-0000-4000-8000-0000000000a1';
const second = '00000000-0000-4000-8000-0000000000a2';
const sandboxes: Sandbox[] = [];
afterEach(() => {
  while (sandboxes.length > 0) sandboxes.pop()!.dispose();
});

async function twoFileSession() {
  const sandbox = createSandbox();
  sandboxes.push(sandbox);
  sandbox.writeFiles({ 'a.txt': 'a original\n', 'b.txt': 'b original\n' });
  const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'full' });
  await manager.checkpoint(first);
  await manager.trackEdit('a.txt');
  await manager.trackEdit('b.txt');
  sandbox.writeFiles({ 'a.txt': 'a edited\n', 'b.txt': 'b edited\n' });
  return { sandbox, manager };
}

/** Runs `work` while the `nth` call to `call` fails with `code` (once). */
async function withFailure<T>(call: CallName, nth: number, code: 'EIO' | 'ENOSPC' | 'EACCES', work: () => Promise<T>): Promise<{ value?: T; error?: unknown }> {
  let seen = 0;
  const restore = instrumentFs([call], (name) => {
    seen += 1;
    return seen === nth ? errnoError(code, name) : undefined;
  });
  try {
    return { value: await work() };
  } catch (error) {
    return { error };
  } finally {
    restore();
  }
}

describe('I/O errors are errors, never safety verdicts', () => {
  it('a checkpoint that meets an I/O error while checking a directory never records the file as behind a moved directory', async () => {
    const { sandbox, manager } = await twoFileSession();
    // readlink of the pinned directory is how its identity is checked on Linux.
    const attempt = await withFailure('readlinkSync', 1, 'EIO', () => manager.checkpoint(second));
    if (attempt.error !== undefined) await manager.checkpoint(second); // failed loudly: the caller retries
    sandbox.writeFiles({ 'a.txt': 'a after the checkpoint\n' });

    const result = await manager.rewindFiles(second);

    expect(result.skipped).toEqual([]);
    expect(fs.readFileSync(`${sandbox.root}/a.txt`, 'utf8')).toBe('a edited\n');
    await manager.close();
  });

  it('a rewind that meets an I/O error while reading the files fails with a typed error and changes nothing', async () => {
    const { sandbox, manager } = await twoFileSession();
    const attempt = await withFailure('readlinkSync', 1, 'EIO', () => manager.rewindFiles(first));

    expect(attempt.value?.skipped ?? [], 'no file is skipped for a parent that did not move').toEqual([]);
    if (attempt.error !== undefined) {
      expect(RewindableError.isInstance(attempt.error) && attempt.error.code, String(attempt.error)).toBe('REWIND_FAILED');
      expect(sandbox.files()).toEqual({ 'a.txt': 'a edited\n', 'b.txt': 'b edited\n' });
    } else {
      expect(sandbox.files()).toEqual({ 'a.txt': 'a original\n', 'b.txt': 'b original\n' });
    }
    await manager.close();
  });
});

describe('a failed append is not in the log', () => {
  it('an append whose flush fails is gone when the session is reopened, as the caller was told', async () => {
    const { sandbox, manager } = await twoFileSession();
    sandbox.writeFiles({ 'c.txt': 'c original\n' });
    // The log is flushed with fdatasync, first of the append's flushes.
    const attempt = await withFailure('fdatasync', 1, 'EIO', () => manager.trackEdit('c.txt'));
    expect(RewindableError.isInstance(attempt.error) && attempt.error.code, String(attempt.error)).toBe('STORE_IO');
    await manager.close();

    const reopened = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: manager.sessionId });
    const [checkpoint] = await reopened.listCheckpoints();
    expect(checkpoint!.files.map((file) => file.slice(sandbox.root.length + 1))).toEqual(['a.txt', 'b.txt']);
    await reopened.trackEdit('c.txt'); // tracked afresh, with a backup that is really there
    sandbox.writeFiles({ 'c.txt': 'c edited\n' });
    await reopened.rewindFiles(first);
    expect(sandbox.files()).toEqual({ 'a.txt': 'a original\n', 'b.txt': 'b original\n', 'c.txt': 'c original\n' });
    await reopened.close();
  });
});

describe('a rewind that cannot record its end is rolled back', () => {
  for (const [call, code] of [
    ['fdatasync', 'EIO'],
    ['writeSync', 'ENOSPC'],
  ] as const) {
    it(`when the end record's ${call} fails with ${code}: the files go back at once, and stay back after reopening`, async () => {
      const { sandbox, manager } = await twoFileSession();
      const edited = sandbox.files();
      // Fail the write of the end record, or the flush right after it.
      let endWritten = false;
      let failed = false;
      const restore = instrumentFs(['writeSync', 'fdatasync'], (name, args) => {
        const isEndRecord = name === 'writeSync' && Buffer.isBuffer(args[1]) && args[1].includes('"type":"rewind-end"');
        if (name === call && !failed && (call === 'writeSync' ? isEndRecord : endWritten)) {
          failed = true;
          return errnoError(code, name);
        }
        if (isEndRecord) endWritten = true;
        return undefined;
      });
      let error: unknown;
      try {
        await manager.rewindFiles(first);
      } catch (caught) {
        error = caught;
      } finally {
        restore();
      }
      expect(failed).toBe(true);
      expect(RewindableError.isInstance(error) && error.code, String(error)).toBe('REWIND_FAILED');
      expect(sandbox.files()).toEqual(edited);
      await manager.close();

      const reopened = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: manager.sessionId });
      expect(sandbox.files()).toEqual(edited);
      await reopened.rewindFiles(first);
      expect(sandbox.files()).toEqual({ 'a.txt': 'a original\n', 'b.txt': 'b original\n' });
      await reopened.close();
    });
  }
});

describe('recovery of an interrupted rewind', () => {
  it('puts back only files that hold what the rewind wrote; a file edited after the crash is left alone', async () => {
    const { sandbox, manager } = await twoFileSession();
    await manager.rewindFiles(first);
    await manager.close();
    // As if the process had died before recording the end: drop the rewind-end line.
    const log = sandbox.logPath(manager.sessionId);
    const lines = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
    expect(lines.at(-1)).toContain('"rewind-end"');
    fs.writeFileSync(log, `${lines.slice(0, -1).join('\n')}\n`);
    // Before the session is reopened, the user edits one of the rewound files.
    sandbox.writeFiles({ 'a.txt': 'a edited by the user after the crash\n' });

    const reopened = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: manager.sessionId });

    expect(sandbox.files()).toEqual({ 'a.txt': 'a edited by the user after the crash\n', 'b.txt': 'b edited\n' });
    await reopened.close();
  });
});

describe('reading backups', () => {
  it('an I/O error reading a backup fails the rewind (nothing changed) instead of leaving that file out', async () => {
    const session = await twoFileSession();
    await session.manager.close();
    const { sandbox } = session;
    const packs = `${sandbox.store}/blobs/packs/`;
    const packHandles = new Set<number>();
    let armed = false;
    let failed = false;
    const restore = instrumentFs(
      ['openSync', 'readSync'],
      (name, args) => {
        if (armed && !failed && name === 'readSync' && packHandles.has(args[0] as number)) {
          failed = true;
          return errnoError('EIO', name);
        }
        return undefined;
      },
      (name, args, result) => {
        if (name === 'openSync' && String(args[0]).startsWith(packs)) packHandles.add(result as number);
      },
    );
    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: session.manager.sessionId });
    const edited = sandbox.files();
    let outcome: { value?: unknown; error?: unknown };
    try {
      armed = true;
      outcome = { value: await manager.rewindFiles(first) };
    } catch (error) {
      outcome = { error };
    } finally {
      restore();
    }
    expect(failed).toBe(true);
    expect(RewindableError.isInstance(outcome.error) && outcome.error.code, JSON.stringify(outcome.value)).toBe('STORE_IO');
    expect(sandbox.files()).toEqual(edited);
    await manager.rewindFiles(first); // the backup was intact all along
    expect(sandbox.files()).toEqual({ 'a.txt': 'a original\n', 'b.txt': 'b original\n' });
    await manager.close();
  });
});

describe('applying a rewind', () => {
  it('a failure after a file was already replaced never leaves that file out of the rollback', async () => {
    const { sandbox, manager } = await twoFileSession();
    const edited = sandbox.files();
    const original = { 'a.txt': 'a original\n', 'b.txt': 'b original\n' };
    // Fail the first lstat after the first file is renamed into place (the signature taken after writing).
    let renamed = false;
    let failed = false;
    const restore = instrumentFs(['renameSync', 'lstatSync'], (name) => {
      if (name === 'renameSync') renamed = true;
      else if (renamed && !failed) {
        failed = true;
        return errnoError('EIO', name);
      }
      return undefined;
    });
    let error: unknown;
    try {
      await manager.rewindFiles(first);
    } catch (caught) {
      error = caught;
    } finally {
      restore();
    }
    expect(failed).toBe(true);
    // Whole before or whole after, and before if the rewind reported failure.
    expect(sandbox.files()).toEqual(error === undefined ? original : edited);
    await manager.close();
  });
});

describe('storing large backups', () => {
  it('a failure while storing a backup too large to wait for its record is a typed STORE_IO error', async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    // Over the 16 MiB a batch holds before it stores its backups ahead of the record.
    sandbox.writeFiles({ 'big.bin': 'x'.repeat(17 * 1024 * 1024) });
    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' });
    await manager.checkpoint(first);
    const attempt = await withFailure('writeSync', 1, 'ENOSPC', () => manager.trackEdit('big.bin'));
    expect(RewindableError.isInstance(attempt.error) && attempt.error.code, String(attempt.error)).toBe('STORE_IO');
    await manager.trackEdit('big.bin'); // nothing was recorded: tracking it again works
    await manager.close();
  });
});
