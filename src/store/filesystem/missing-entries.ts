import fs from 'node:fs';
import { storeIoError } from '../../errors.js';

/**
 * Entries of the store that another process may remove meanwhile (a
 * clean-up, a lock being broken, a session deleted). A step on one takes a
 * missing entry (ENOENT) for an answer and throws any other failure; a quiet
 * lookup (`safeLstat`, `entriesIn`) answers "nothing there" for any failure,
 * so it serves listings and sizes, never a decision to keep or write data.
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

export function safeLstat(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch {
    return undefined;
  }
}

export function entriesIn(folder: string): fs.Dirent[] {
  try {
    return fs.readdirSync(folder, { withFileTypes: true });
  } catch {
    return [];
  }
}
