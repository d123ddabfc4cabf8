import fs from 'node:fs';
import { storeIoError } from '../../errors.js';

/**
 * Steps on entries of the store that another process may remove meanwhile
 * (a clean-up, a lock being broken, a session deleted): a missing entry
 * (ENOENT) is an answer, any other failure is thrown.
 */

/** True when `operation` was done, false when the entry it acts on was missing. */
export function unlessMissing(operation: () => void): boolean {
  try {
    operation();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** A folder's entries, none when it does not exist; a folder that cannot be read is a STORE_IO error (`what`: what it lists). */
export function listFolder(folder: string, what: string): fs.Dirent[] {
  try {
    return fs.readdirSync(folder, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw storeIoError(`list the ${what} in ${folder}`, error);
  }
}
