import fs from 'node:fs';
import { flushFile, writeAll } from '../../fs/flush.js';

/**
 * Creates `target` with `bytes` in one step: a new temporary file, written
 * (and flushed when `durable`) and then linked into place. `link` fails when
 * the name exists, so `target` is never overwritten, and never seen half
 * written, not even after a power cut. False when `target` existed already.
 */
export async function createByLink(temporary: string, target: string, bytes: Uint8Array, durable: boolean): Promise<boolean> {
  try {
    const fd = fs.openSync(temporary, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
    try {
      writeAll(fd, bytes);
      if (durable) await flushFile(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.linkSync(temporary, target);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}
