import type { SessionKey } from '../storage-adapter.js';

/** Where one session's copy to the remote stands (`MirroredStorage.status()`). */
export interface ReplicatorStatus {
  key: SessionKey;
  /** `idle`: the remote holds everything accepted. `locked`: another process holds the session on the remote, so nothing is copied there. */
  state: 'idle' | 'pushing' | 'retrying' | 'diverged' | 'locked';
  pendingEntries: number;
  pendingBlobs: number;
  /** Failed attempts in a row. */
  attempts: number;
  lastError?: unknown;
}
