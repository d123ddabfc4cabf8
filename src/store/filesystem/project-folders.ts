import type fs from 'node:fs';
import path from 'node:path';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import { entriesIn, listFolder, safeLstat } from './missing-entries.js';

/**
 * `projects/<project key>/`: the folder of one project's logs and locks. The
 * store never follows a link there. A folder that is a link (to another
 * tool's sessions, into a copied store) would have the store list, lock and
 * delete files outside it, so it is never listed as a project, and any use of
 * it fails with STORE_IO saying what to do.
 */

/** The folder of a project's sessions, checked not to be a link (it need not exist). */
export function projectFolder(projectsDirectory: string, projectKey: string): string {
  const folder = path.join(projectsDirectory, projectKey);
  const found = safeLstat(folder);
  if (found !== undefined && !found.isDirectory()) throw notAFolderError(folder, found);
  return folder;
}

/** Project keys with a folder of their own: real directories only, never a link, never a hidden name. */
export function listProjectFolders(projectsDirectory: string): string[] {
  return listFolder(projectsDirectory, 'projects').filter((entry) => entry.isDirectory() && !entry.name.startsWith('.')).map((entry) => entry.name);
}

/** Names in `projects/` that are links: sessions may lie behind them that the store cannot see. */
export function linkedProjectFolders(projectsDirectory: string): string[] {
  return entriesIn(projectsDirectory)
    .filter((entry) => entry.isSymbolicLink())
    .map((entry) => entry.name);
}

function notAFolderError(folder: string, found: fs.Stats): RewindableError {
  const what = found.isSymbolicLink() ? 'a symbolic link' : 'not a folder';
  return new RewindableError(
    RewindableErrorCode.STORE_IO,
    `The store's folder of a project, ${folder}, is ${what}: the store never follows links in its projects folder, so nothing ` +
      'was read or written there. Replace it with a real folder (move what it leads to into its place), or remove it.',
    { details: { path: folder } },
  );
}
