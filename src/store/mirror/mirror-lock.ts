import { RewindableError, RewindableErrorCode } from '../../errors.js';
import type { SessionKey, StorageAdapter, StorageLock } from '../storage-adapter.js';

/** The local lock, then the remote's: a session live on another machine is refused; an unreachable remote is not. */
export async function lockBoth(
  key: SessionKey,
  local: StorageAdapter,
  remote: StorageAdapter | undefined,
  onRemoteSkipped: (error: unknown) => void,
): Promise<StorageLock> {
  const localLock = await local.lock?.(key);
  let remoteLock: StorageLock | undefined;
  if (remote?.lock !== undefined) {
    try {
      remoteLock = await remote.lock(key);
    } catch (error) {
      if (RewindableError.isInstance(error) && error.code === RewindableErrorCode.SESSION_LOCKED) {
        await localLock?.release();
        throw error;
      }
      onRemoteSkipped(error);
    }
  }
  return {
    async release() {
      try {
        await remoteLock?.release();
      } finally {
        await localLock?.release();
      }
    },
  };
}
