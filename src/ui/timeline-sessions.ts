import { CheckpointManager } from '../checkpoint-manager.js';
import { listSessions, type SessionSummary } from '../session/list-sessions.js';
import type { StorageAdapter } from '../store/storage-adapter.js';
import type { StorageAdapterV1 } from '../store/storage-adapter-v1.js';

/** Where the timeline's sessions are: a project directory and its store. */
export interface TimelineLocation {
  /** The project directory, absolute. */
  cwd: string;
  /** Any storage adapter; without one, the filesystem store in `storeDir`. */
  storage?: StorageAdapter | StorageAdapterV1;
  /** The filesystem store's directory, when no `storage` is given. @default process.env.REWINDABLE_HOME, else `~/.rewindable` */
  storeDir?: string;
}

/**
 * The project's sessions, opened per request through the public API only, so
 * the page works with every storage adapter. A session is opened read-only
 * (no lock) to list and preview, and for writing only for the length of one
 * rewind: the agent that owns the session keeps working while the page is open.
 */
export class TimelineSessions {
  /** Writes one after another: two rewinds of one session at once would lock each other out. */
  private writing: Promise<unknown> = Promise.resolve();

  constructor(readonly location: TimelineLocation) {}

  list(): Promise<SessionSummary[]> {
    return listSessions(this.store({ cwd: this.location.cwd }));
  }

  read<T>(sessionId: string, work: (manager: CheckpointManager) => Promise<T>): Promise<T> {
    return this.withSession(sessionId, true, work);
  }

  write<T>(sessionId: string, work: (manager: CheckpointManager) => Promise<T>): Promise<T> {
    const run = this.writing.then(() => this.withSession(sessionId, false, work));
    this.writing = run.catch(() => {});
    return run;
  }

  /** Resolves once a rewind under way is done: a server that stops never cuts one short. */
  async settled(): Promise<void> {
    await this.writing;
  }

  private async withSession<T>(sessionId: string, readOnly: boolean, work: (manager: CheckpointManager) => Promise<T>): Promise<T> {
    const manager = await CheckpointManager.open(this.store({ cwd: this.location.cwd, session: { resume: sessionId, readOnly } }));
    try {
      return await work(manager);
    } finally {
      await manager.close();
    }
  }

  private store<T extends object>(options: T): T & Pick<TimelineLocation, 'storage' | 'storeDir'> {
    const { storage, storeDir } = this.location;
    return { ...options, ...(storage !== undefined ? { storage } : {}), ...(storeDir !== undefined ? { storeDir } : {}) };
  }
}
