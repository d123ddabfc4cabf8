import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RewindableError } from '../../src/index.js';
import { readLock } from '../../src/store/filesystem/lock-file.js';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) {
    fs.chmodSync(directory, 0o700);
    fs.rmSync(directory, { recursive: true, force: true });
  }
});

function tempDirectory(): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-lock-'));
  directories.push(directory);
  return directory;
}

describe('readLock(file)', () => {
  it('answers "no lock" only when there is no entry at the path', () => {
    const directory = tempDirectory();

    expect(readLock(path.join(directory, 'session.lock'))).toBeUndefined();
    expect(readLock(path.join(directory, 'missing', 'session.lock'))).toBeUndefined();
  });

  it('throws STORE_IO, naming the lock, when the lock path cannot be looked at (a link loop, a file for a directory)', () => {
    const directory = tempDirectory();
    fs.symlinkSync('loop', path.join(directory, 'loop'));
    fs.writeFileSync(path.join(directory, 'file'), 'not a directory');

    for (const lock of [path.join(directory, 'loop', 'session.lock'), path.join(directory, 'file', 'session.lock')]) {
      let thrown: unknown;
      try {
        readLock(lock);
      } catch (error) {
        thrown = error;
      }
      expect(RewindableError.hasCode(thrown, 'STORE_IO') && thrown.message, lock).toContain(lock);
    }
  });

  // Root reads a directory whatever its mode, so the permission check cannot fail for it.
  it.skipIf(process.getuid?.() === 0)('throws STORE_IO, not "no lock", when the lock\'s directory may not be searched (EACCES)', () => {
    const directory = tempDirectory();
    const locked = path.join(directory, 'project');
    fs.mkdirSync(locked);
    fs.writeFileSync(path.join(locked, 'session.lock'), '{}');
    fs.chmodSync(locked, 0o000);
    directories.unshift(locked);

    expect(() => readLock(path.join(locked, 'session.lock'))).toThrow(expect.objectContaining({ code: 'STORE_IO' }));
  });
});
