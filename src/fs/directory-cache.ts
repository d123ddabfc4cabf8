import { LinkFreeDirectories } from './glance-many.js';
import { PinnedDirectory, type PinFailure } from './pinned-directory.js';

/**
 * Pinned directories shared by the files of one operation (a checkpoint, a
 * rewind): a directory holding many tracked files is opened and checked once,
 * not once per file. What a pin protects still holds: every entry is reached
 * through the directory that was opened, never by path.
 */
export class DirectoryCache {
  private readonly pinned = new Map<string, PinnedDirectory | PinFailure>();
  /** Directories checked, without pinning them, to have no link on their path (for glances, which write nothing). */
  readonly linkFree = new LinkFreeDirectories();

  open(directory: string): PinnedDirectory | PinFailure {
    let found = this.pinned.get(directory);
    if (found === undefined) this.pinned.set(directory, (found = PinnedDirectory.open(directory)));
    return found;
  }

  /** Forgets a directory (it was created or changed during the operation). */
  forget(directory: string): void {
    const found = this.pinned.get(directory);
    if (typeof found === 'object') found.close();
    this.pinned.delete(directory);
  }

  close(): void {
    for (const found of this.pinned.values()) if (typeof found === 'object') found.close();
    this.pinned.clear();
  }
}
