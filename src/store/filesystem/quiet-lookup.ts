import fs from 'node:fs';

/**
 * Lookups in the store that answer "nothing there" for an entry that is
 * missing or vanishes meanwhile (another process's clean-up, a rename):
 * listings and sizes, never a decision to keep or write data.
 */

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
