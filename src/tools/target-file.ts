import path from 'node:path';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { findMissingParents, inspectEntry, type ObservedPath } from '../fs/inspect-path.js';
import { pinCreatingParents, PinnedDirectory } from '../fs/pinned-directory.js';
import { asToolError, toolFailed } from './tool-errors.js';

/** The file a tool is about to replace, found without following any link. */
export interface TargetFile {
  /** Canonical absolute path. */
  readonly path: string;
  readonly name: string;
  /** The pinned parent directory; undefined while it does not exist yet. */
  directory: PinnedDirectory | undefined;
  /** What is there now: undefined when the file does not exist. */
  readonly existing: ExistingFile | undefined;
  /** How many of its nearest ancestors do not exist yet (0: its parent does), which the write creates. */
  readonly missingParents: number;
  /** What was found there, as a first backup records it (the backup is taken from this reading, not a second one). */
  readonly found: ObservedPath;
  /** Creates the missing parent directories (each inside the pinned level above) and pins the parent. */
  createParentDirectories(): PinnedDirectory;
  close(): void;
}

export interface ExistingFile {
  /** Permission bits, kept by the write. */
  mode: number;
  bytes: Buffer;
}

/**
 * Opens the parent of `filePath` (a canonical path from `resolvePath`) and
 * reads the file through it, refusing links, anything that is not a regular
 * file and files over `maxBytes`, with the same codes `trackEdit` uses.
 */
export function openTargetFile(tool: string, filePath: string, maxBytes: number): TargetFile {
  const name = path.basename(filePath);
  let pinned: ReturnType<typeof PinnedDirectory.open>;
  try {
    pinned = PinnedDirectory.open(path.dirname(filePath));
  } catch (error) {
    throw asToolError(tool, filePath, error);
  }
  if (pinned === 'missing') {
    const ancestors = findMissingParents(path.dirname(filePath));
    if ('problem' in ancestors) throw toolFailed(tool, `cannot create ${filePath}: ${ancestors.problem}.`, { path: filePath });
    return target(tool, filePath, name, undefined, { state: { kind: 'absent' }, ...(ancestors.missing > 0 ? { missingParents: ancestors.missing } : {}) });
  }
  if (typeof pinned === 'string') throw parentProblem(tool, filePath, pinned);
  try {
    const found = inspectEntry(pinned, name, { maxBytes });
    const { state } = found;
    switch (state.kind) {
      case 'absent':
      case 'file':
        return target(tool, filePath, name, pinned, found);
      case 'symlink':
        throw new RewindableError(
          RewindableErrorCode.PATH_IS_LINK,
          `${filePath} is a symbolic link. ${tool} never writes through links; edit the file it points to by its own path.`,
          { details: { tool, path: filePath } },
        );
      case 'not-regular':
        throw new RewindableError(RewindableErrorCode.NOT_A_REGULAR_FILE, `${filePath} is a ${state.fileType}, not a regular file; ${tool} only writes regular files.`, {
          details: { tool, path: filePath },
        });
      case 'too-large':
        throw new RewindableError(
          RewindableErrorCode.FILE_TOO_LARGE,
          `${filePath} is ${state.size} bytes, over the ${maxBytes}-byte limit of files the tools read (maxContentBytes); raise the limit to change it with ${tool}.`,
          { details: { tool, path: filePath } },
        );
      case 'unsafe-parent':
        throw toolFailed(tool, `${filePath}: ${found.reason}.`, { path: filePath });
    }
  } catch (error) {
    pinned.close();
    throw asToolError(tool, filePath, error);
  }
}

function target(tool: string, filePath: string, name: string, directory: PinnedDirectory | undefined, found: ObservedPath): TargetFile {
  return {
    path: filePath,
    name,
    directory,
    existing: found.state.kind === 'file' ? { mode: found.state.mode, bytes: found.content! } : undefined,
    missingParents: found.missingParents ?? 0,
    found,
    createParentDirectories() {
      const pinned = pinCreatingParents(filePath);
      if (typeof pinned === 'string') throw parentProblem(tool, filePath, pinned);
      this.directory = pinned;
      return pinned;
    },
    close() {
      this.directory?.close();
    },
  };
}

function parentProblem(tool: string, filePath: string, failure: 'link' | 'not-directory' | 'moved' | 'missing'): RewindableError {
  if (failure === 'not-directory') return toolFailed(tool, `cannot write ${filePath}: its parent path is not a directory.`, { path: filePath });
  if (failure === 'missing') return toolFailed(tool, `cannot write ${filePath}: its parent directory disappeared while it was being created.`, { path: filePath });
  return new RewindableError(
    RewindableErrorCode.PATH_IS_LINK,
    `${filePath} cannot be written: its parent directory changed (it is now a link or was moved) while the tool ran. Nothing was written.`,
    { details: { tool, path: filePath } },
  );
}
