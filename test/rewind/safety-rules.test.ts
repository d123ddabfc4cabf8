import type fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FileState } from '../../src/schemas.js';
import {
  changedAfterInterruptedRewind,
  changedSincePlanned,
  outsideRoots,
  refusalOf,
  storedPathRefusal,
  unreadableBackup,
  type PathSituation,
} from '../../src/rewind/safety.js';

/** Every rule of src/rewind/safety.ts, each with a state that triggers it, the reason and the message. */

const filePath = '/project/a.txt';
const now: FileState = { kind: 'file', sha256: 'a'.repeat(64), size: 3, mode: 0o644 };
const target: FileState = { kind: 'file', sha256: 'b'.repeat(64), size: 4, mode: 0o644 };
const plain: PathSituation = { path: filePath, found: { state: now }, captured: false, target, action: 'restore', conflict: false, skipConflicts: false };
const hardLinked = { nlink: 2n } as fs.BigIntStats;

describe('refusalOf(situation): what the plan leaves alone', () => {
  const refused: Array<[string, Partial<PathSituation>, string, string]> = [
    ['a link now', { found: { state: { kind: 'symlink' } } }, 'symlink', 'it is now a symbolic link; links are never written through'],
    ['a FIFO now', { found: { state: { kind: 'not-regular', fileType: 'fifo' } } }, 'not-regular', 'it is now a fifo, not a regular file'],
    ['a parent that moved', { found: { state: { kind: 'unsafe-parent' }, reason: 'its parent directory is now a link' } }, 'parent-changed', 'its parent directory is now a link'],
    ['a parent that moved, no detail', { found: { state: { kind: 'unsafe-parent' } } }, 'parent-changed', 'its parent directory changed'],
    ['over the size cap now', { found: { state: { kind: 'too-large', size: 99 } } }, 'too-large', 'it is now 99 bytes, over the backup size cap'],
    ['a second hard link', { found: { state: now, stat: hardLinked } }, 'hard-link', 'it has 2 hard links; writing it would change the other names too'],
    ['a link at the target', { target: { kind: 'symlink' }, action: undefined }, 'target-not-restorable', 'at that checkpoint it was a symbolic link'],
    ['a directory at the target', { target: { kind: 'not-regular', fileType: 'directory' }, action: undefined }, 'target-not-restorable', 'it was a directory, which is never recreated'],
    ['a moved parent at the target', { target: { kind: 'unsafe-parent' }, action: undefined }, 'target-not-restorable', 'its parent path went through a link'],
    ['over the cap at the target', { target: { kind: 'too-large', size: 99 }, action: undefined }, 'target-not-restorable', 'it was 99 bytes, over the backup size cap'],
    ['a conflict, skipped', { conflict: true, skipConflicts: true }, 'conflict', 'it changed since the tracked tools last wrote it, and conflicts are skipped'],
  ];
  it.each(refused)('refuses %s', (_, situation, reason, message) => {
    const skipped = refusalOf({ ...plain, ...situation });
    expect(skipped).toEqual({ path: filePath, reason, message: expect.stringContaining(message) });
    expect(skipped!.message).toMatch(new RegExp(`^${filePath} was left alone: .*\\.$`));
  });

  const allowed: Array<[string, Partial<PathSituation>]> = [
    ['a regular file with one name', {}],
    ['a file that does not exist', { found: { state: { kind: 'absent' } }, action: 'recreate' }],
    ['a link in the capture scope (replaced, never followed)', { found: { state: { kind: 'symlink' } }, captured: true, action: 'recreate' }],
    ['a conflict that is not skipped', { conflict: true }],
    ['a skipped conflict with nothing to do', { conflict: true, skipConflicts: true, action: undefined }],
  ];
  it.each(allowed)('allows %s', (_, situation) => {
    expect(refusalOf({ ...plain, ...situation })).toBeUndefined();
  });

  it('puts what is there now before the target, and both before a conflict', () => {
    const everything = { found: { state: { kind: 'symlink' as const } }, target: { kind: 'symlink' as const }, conflict: true, skipConflicts: true };
    expect(refusalOf({ ...plain, ...everything })?.reason).toBe('symlink');
    expect(refusalOf({ ...plain, ...everything, captured: true })?.reason).toBe('target-not-restorable');
  });
});

describe('refusals outside the plan', () => {
  it.each([
    ['changed-during-rewind', 'changed-during-rewind', 'it changed while the rewind was running'],
    ['parent-changed', 'parent-changed', 'its parent directory changed since the plan was made'],
    ['symlink', 'symlink', 'it became a symbolic link while the rewind was running; links are never written through'],
    ['hard-link', 'hard-link', 'it gained a hard link while the rewind was running'],
    ['not-regular', 'not-regular', 'it stopped being a regular file while the rewind was running'],
  ] as const)('changedSincePlanned(%s) just before the write', (found, reason, message) => {
    expect(changedSincePlanned(filePath, found)).toEqual({ path: filePath, reason, message: `${filePath} was left alone: ${message}.` });
  });

  it('changedSincePlanned(parent-changed) says what happened to the directory', () => {
    expect(changedSincePlanned(filePath, 'parent-changed', 'its directory is gone').message).toBe(`${filePath} was left alone: its directory is gone.`);
  });

  it('outsideRoots refuses a path outside the root and the extra roots, or inside the store', () => {
    const confinement = { root: '/project', extraRoots: ['/shared'], storeDirectory: '/project/.rewindable' };
    expect(outsideRoots('/project/a.txt', confinement)).toBeUndefined();
    expect(outsideRoots('/shared/b.txt', confinement)).toBeUndefined();
    for (const outside of ['/elsewhere/c.txt', '/project/.rewindable/log']) {
      expect(outsideRoots(outside, confinement)).toEqual({ path: outside, reason: 'outside-project', message: expect.stringContaining('outside the project root and the extra roots') });
    }
  });

  it('storedPathRefusal names a path no file can have', () => {
    expect(storedPathRefusal('/project/a\0b', 'invalid-path')).toEqual({ path: '/project/a\0b', reason: 'invalid-path', message: expect.stringContaining('no file can have that name') });
  });

  it('unreadableBackup carries the store reason', () => {
    expect(unreadableBackup(filePath, 'its bytes no longer match their hash')).toEqual({
      path: filePath,
      reason: 'backup-unreadable',
      message: `${filePath} was left alone: its bytes no longer match their hash.`,
    });
  });

  it('changedAfterInterruptedRewind keeps a change made after the crash', () => {
    expect(changedAfterInterruptedRewind(filePath)).toEqual({ path: filePath, reason: 'changed-during-rewind', message: expect.stringContaining('rolling it back would discard that change') });
  });
});
