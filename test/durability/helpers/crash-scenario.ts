/**
 * The session the crash test runs in a child process and kills: three turns of
 * tracked edits over text, binary, large (loose-blob) and nested files, then
 * four multi-file rewinds (to the middle checkpoint, its undo, a selective one
 * of a file and a directory to the first checkpoint, then all of it). Shared by the worker, which plays it, and the test, which
 * knows from it what the files must be after a kill at any step.
 */

/** Relative path -> content; a missing key means the file does not exist. */
export type FileSet = Record<string, string>;

/** Blobs of at least this size are stored as loose files; the worker lowers it so `big.dat` exercises them cheaply. */
export const looseBlobMinBytes = 8192;

/** Content of the large file: over the loose-blob threshold, so loose blobs are written too. */
function large(version: number): string {
  return `version ${version}\n${'0123456789abcdef\n'.repeat(600)}end ${version}\n`;
}

export const originalFiles: FileSet = {
  'a.txt': 'alpha 0\nline two\n',
  'b.bin': Buffer.from([0, 1, 2, 3, 254, 255, 0, 10]).toString('latin1'),
  'c.txt': 'charlie 0\n',
  'big.dat': large(0),
  'keep.txt': 'never tracked\n',
};

export type ScenarioStep =
  | { do: 'open' }
  | { do: 'checkpoint'; label: string }
  /** trackEdit(path), then the agent's own write (content) or delete (null). */
  | { do: 'track'; path: string; content: string | null }
  | { do: 'record-write'; path: string }
  /** Rewind to a labelled checkpoint (only `paths`, files or directories, when given), or to the undo checkpoint of the step at `undoOf`. */
  | { do: 'rewind'; label: string; paths?: string[] }
  | { do: 'rewind-undo'; undoOf: number }
  | { do: 'close' };

export const scenarioSteps: ScenarioStep[] = [
  { do: 'open' },
  { do: 'checkpoint', label: 'c1' },
  { do: 'track', path: 'a.txt', content: 'alpha 1\nline two\n' },
  { do: 'record-write', path: 'a.txt' },
  { do: 'track', path: 'b.bin', content: Buffer.from([0, 1, 2, 3, 9, 9, 0, 10]).toString('latin1') },
  { do: 'track', path: 'd.txt', content: 'delta 1\n' },
  { do: 'track', path: 'big.dat', content: large(1) },
  { do: 'checkpoint', label: 'c2' },
  { do: 'track', path: 'c.txt', content: null },
  { do: 'track', path: 'sub/e.txt', content: 'echo 1\n' },
  { do: 'track', path: 'a.txt', content: 'alpha 2\nline two\nline three\n' },
  { do: 'record-write', path: 'a.txt' },
  { do: 'track', path: 'd.txt', content: 'delta 2\n' },
  { do: 'checkpoint', label: 'c3' },
  { do: 'track', path: 'f.txt', content: 'foxtrot 1\n' },
  { do: 'track', path: 'big.dat', content: large(2) },
  { do: 'rewind', label: 'c2' },
  { do: 'rewind-undo', undoOf: 16 },
  { do: 'rewind', label: 'c1', paths: ['a.txt', 'sub'] },
  { do: 'rewind', label: 'c1' },
  { do: 'close' },
];

/**
 * The files after each step (index = step), as a correct library leaves
 * them. A rewind's target is computed from the model: the state at the
 * checkpoint for paths tracked by then, the first backup for paths tracked
 * later.
 */
export function expectedFilesAfterEachStep(): FileSet[] {
  const states: FileSet[] = [];
  let current: FileSet = { ...originalFiles };
  const atCheckpoint = new Map<string, FileSet>();
  const firstBackup = new Map<string, string | null>();
  const trackedAt = new Map<string, number>(); // path -> number of checkpoints taken when first tracked
  let checkpointsTaken = 0;
  const trackedPaths = () => [...firstBackup.keys()];
  const rewindTo = (snapshot: FileSet, checkpointsBefore: number, only?: string[]): FileSet => {
    const next = { ...current };
    const selected = (path: string) => only === undefined || only.some((entry) => path === entry || path.startsWith(`${entry}/`));
    for (const path of trackedPaths().filter(selected)) {
      const target = trackedAt.get(path)! <= checkpointsBefore ? (snapshot[path] ?? null) : firstBackup.get(path)!;
      if (target === null) delete next[path];
      else next[path] = target;
    }
    return next;
  };
  const checkpointIndex = new Map<string, number>();
  scenarioSteps.forEach((step, index) => {
    switch (step.do) {
      case 'checkpoint':
        checkpointsTaken += 1;
        checkpointIndex.set(step.label, checkpointsTaken);
        atCheckpoint.set(step.label, { ...current });
        break;
      case 'track':
        if (!firstBackup.has(step.path)) {
          firstBackup.set(step.path, current[step.path] ?? null);
          trackedAt.set(step.path, checkpointsTaken);
        }
        current = { ...current };
        if (step.content === null) delete current[step.path];
        else current[step.path] = step.content;
        break;
      case 'rewind':
        current = rewindTo(atCheckpoint.get(step.label)!, checkpointIndex.get(step.label)!, step.paths);
        break;
      case 'rewind-undo':
        // The undo checkpoint holds every tracked path as it was just before that rewind.
        current = { ...states[step.undoOf - 1]! };
        break;
      default:
        break;
    }
    states[index] = current;
  });
  return states;
}

/** Fixed checkpoint ids, so the test knows them without asking the child. */
export const checkpointIds: Record<string, string> = {
  c1: '00000000-0000-4000-8000-0000000000c1',
  c2: '00000000-0000-4000-8000-0000000000c2',
  c3: '00000000-0000-4000-8000-0000000000c3',
};

/** What the crash worker is asked to do. */
export interface CrashWorkerConfig {
  root: string;
  store: string;
  sessionId: string;
  durability: 'full' | 'none';
  /** `scenario`: play every step. `reopen`: resume the session (which recovers it) and close. */
  mode: 'scenario' | 'reopen';
  /** SIGKILL the process just before this library fs call (1-based); null to run to the end. */
  killAt: number | null;
  /**
   * SIGKILL the process right after the first write that holds a `rewind-end`
   * record returns: the rewind has committed but its caller never heard so.
   * Exact whatever the number of calls before it (which the racy window can move by one or two).
   */
  killAfterRewindEnd?: boolean;
}

/** One line the worker prints after each step it finished. */
export interface StepReport {
  step: number;
  /** Library fs calls counted so far. */
  calls: number;
  undoCheckpointId?: string;
}
