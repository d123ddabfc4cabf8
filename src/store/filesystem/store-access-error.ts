import { RewindableError, RewindableErrorCode } from '../../errors.js';

/**
 * What to do about the usual reasons the store's own directory cannot be used.
 * `storeIoError`'s generic advice (free space, permissions) misleads for a
 * store on a read-only filesystem or a store path that names a file.
 */
const remedies: Record<string, string> = {
  EROFS: 'The store is on a read-only filesystem; point the store (storeDir, --store or REWINDABLE_HOME) at a writable directory',
  ENOTDIR: 'Part of the store path is a file, not a directory; point the store (storeDir, --store or REWINDABLE_HOME) at a directory',
  EACCES: 'This user may not use the store directory; fix its permissions or point the store elsewhere',
  EPERM: 'This user may not use the store directory; fix its permissions or point the store elsewhere',
  ENOSPC: 'The disk holding the store is full; free some space, then retry',
  EDQUOT: 'The disk quota for the store is used up; free some space, then retry',
};

/** A STORE_IO error for a failure of the filesystem store's own I/O, saying what was being done and what to do about it. */
export function storeAccessError(action: string, cause: unknown): RewindableError {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  const reason = cause instanceof Error ? cause.message : String(cause);
  const remedy = (code !== undefined ? remedies[code] : undefined) ?? 'Check free space and permissions, then retry';
  return new RewindableError(RewindableErrorCode.STORE_IO, `Could not ${action}: ${reason}. ${remedy}.`, { cause });
}
