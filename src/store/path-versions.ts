import type { StoreEntry } from './storage-adapter.js';

/** At most this many versions of files just deleted are stored again on their own per append (see `noteAppend`). */
const fewDeletions = 64;

/** What a store entry records of a path: its content's hash, or undefined when it has none (absent, a link). */
type RecordedState = [path: string, hash: string | undefined];

/**
 * The latest stored version of each path of one session, read from the
 * entries appended (rewindable's log records), for any adapter that stores a
 * file's versions in relation to each other. The filesystem pack stores a
 * file's next version as a delta of the one before, and takes the last
 * version of a file just deleted, which a rewind would recreate, out of its
 * bundle.
 */
export class PathVersions {
  private readonly latest = new Map<string, string>();

  /** Notes entries stored (a loaded log, or an append's once written). */
  noteStored(entries: readonly StoreEntry[]): void {
    for (const entry of entries) for (const [path, hash] of recordedStates(entry)) this.set(path, hash);
  }

  /**
   * What an append's entries change. Returns each new version's predecessor
   * (by hash), and the last versions of paths recorded gone, when few enough
   * of them that storing each again on its own costs less than a rewind
   * inflating their bundles.
   */
  changesIn(entries: readonly StoreEntry[]): { previous: Map<string, string>; deleted: string[] } {
    const previous = new Map<string, string>();
    const deleted: string[] = [];
    const changed = new Map<string, string | undefined>();
    for (const entry of entries) {
      for (const [path, hash] of recordedStates(entry)) {
        const before = changed.has(path) ? changed.get(path) : this.latest.get(path);
        if (before !== undefined && hash !== before) {
          if (hash === undefined) deleted.push(before);
          else previous.set(hash, before);
        }
        changed.set(path, hash);
      }
    }
    return { previous, deleted: deleted.length <= fewDeletions ? deleted : [] };
  }

  private set(path: string, hash: string | undefined): void {
    if (hash === undefined) this.latest.delete(path);
    else this.latest.set(path, hash);
  }
}

/**
 * The path states an entry records: `track` records and `write` records that kept their bytes ({ path, state }), `checkpoint` records (files: { path, state }),
 * `scan-backups` ([path, sha256, …]), and the merged contents a `rewind-begin` will write (plan: { path, to }).
 */
function recordedStates(entry: StoreEntry): RecordedState[] {
  const files = entry.files;
  switch (entry.type) {
    case 'track':
      return [fromPathAndState(entry)];
    case 'write':
      return entry.stored === true ? [fromPathAndState(entry)] : [];
    case 'rewind-begin':
      return Array.isArray(entry.plan)
        ? entry.plan.flatMap((step) => (typeof step === 'object' && step !== null && 'to' in step ? [fromPathAndState({ path: step.path, state: step.to })] : []))
        : [];
    case 'checkpoint':
      return Array.isArray(files) ? files.map((file) => fromPathAndState(file as Record<string, unknown>)) : [];
    case 'scan-backups':
      return Array.isArray(files) ? files.map((file) => (Array.isArray(file) ? [String(file[0]), stringOrUndefined(file[1])] : ['', undefined])) : [];
    default:
      return [];
  }
}

function fromPathAndState(value: Record<string, unknown>): RecordedState {
  const state = value.state as { kind?: unknown; sha256?: unknown } | undefined;
  return [String(value.path), state?.kind === 'file' ? stringOrUndefined(state.sha256) : undefined];
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
