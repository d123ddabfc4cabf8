import { mergeThreeWay } from '../../../src/text/three-way-merge.js';

/**
 * The session the crash test runs in a child process and kills: three turns of
 * tracked edits over text, binary, large (loose-blob) and nested files, then
 * four multi-file rewinds (to the middle checkpoint, its undo, a selective one
 * of a file and a directory to the first checkpoint, then all of it); then two
 * more turns and a `revertTurn` of the first of them (a merge, a restore and a
 * deletion), and a turn whose file is edited after the tools, rewound with
 * `onConflict: 'merge'`. Shared by the worker, which plays it, and the test, which
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

/**
 * A text file over the loose-blob threshold whose first and last lines
 * differ by version: two turns that change one each merge cleanly.
 */
export function mergeable(head: string, tail: string): string {
  return `head ${head}\n${Array.from({ length: 800 }, (_, line) => `middle ${line}\n`).join('')}tail ${tail}\n`;
}

export const originalFiles: FileSet = {
  'a.txt': 'alpha 0\nline two\n',
  'm.txt': mergeable('0', '0'),
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
  /** Someone other than the tools writes the file (not tracked). */
  | { do: 'edit'; path: string; content: string }
  /**
   * Rewind to a labelled checkpoint (only `paths`, files or directories, when given; `merge`: with
   * `onConflict: 'merge'`), or to the undo checkpoint of the step at `undoOf`.
   */
  | { do: 'rewind'; label: string; paths?: string[]; merge?: true }
  | { do: 'rewind-undo'; undoOf: number }
  /** `revertTurn` of the turn that began at a labelled checkpoint. */
  | { do: 'revert-turn'; label: string }
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
  { do: 'checkpoint', label: 'c4' },
  { do: 'track', path: 'm.txt', content: mergeable('4', '0') },
  { do: 'track', path: 'c.txt', content: 'charlie 4\n' },
  { do: 'track', path: 'g.txt', content: 'golf 4\n' },
  { do: 'checkpoint', label: 'c5' },
  { do: 'track', path: 'm.txt', content: mergeable('4', '5') },
  // m.txt merged (its tail, from turn c5, is kept), c.txt restored, g.txt deleted.
  { do: 'revert-turn', label: 'c4' },
  { do: 'checkpoint', label: 'c6' },
  { do: 'track', path: 'm.txt', content: mergeable('6', '5') },
  { do: 'record-write', path: 'm.txt' },
  { do: 'edit', path: 'm.txt', content: mergeable('6', 'user') },
  { do: 'track', path: 'a.txt', content: 'alpha 6\nline two\n' },
  { do: 'record-write', path: 'a.txt' },
  // m.txt merged (the user's tail is kept), a.txt restored.
  { do: 'rewind', label: 'c6', merge: true },
  { do: 'close' },
];

/** The steps that rewind (a transaction with an undo point): their kills must roll back or complete. */
export const rewindSteps = scenarioSteps.flatMap((step, index) => (step.do === 'rewind' || step.do === 'rewind-undo' || step.do === 'revert-turn' ? [index] : []));

/** The steps that write what a merge computed. */
export const mergeSteps = scenarioSteps.flatMap((step, index) => (step.do === 'revert-turn' || (step.do === 'rewind' && step.merge === true) ? [index] : []));

/**
 * The files after each step (index = step), as a correct library leaves
 * them. A rewind's target is computed from the model: the state at the
 * checkpoint for paths tracked by then, the first backup for paths tracked
 * later. A revert or a merge rewind undoes a change on top of the file now
 * (`undoOnTop`).
 */
export function expectedFilesAfterEachStep(): FileSet[] {
  const states: FileSet[] = [];
  let current: FileSet = { ...originalFiles };
  const atCheckpoint = new Map<string, FileSet>();
  const firstBackup = new Map<string, string | null>();
  const trackedAt = new Map<string, number>(); // path -> number of checkpoints taken when first tracked
  const lastWrite = new Map<string, string | null>(); // by `record-write`: the scenario merges only paths the tools just wrote
  let checkpointsTaken = 0;
  const checkpointIndex = new Map<string, number>();
  const trackedPaths = () => [...firstBackup.keys()];
  const versionAt = (path: string, label: string): string | null =>
    trackedAt.get(path)! <= checkpointIndex.get(label)! ? (atCheckpoint.get(label)![path] ?? null) : firstBackup.get(path)!;
  const withPath = (files: FileSet, path: string, content: string | null): FileSet => {
    const next = { ...files };
    if (content === null) delete next[path];
    else next[path] = content;
    return next;
  };
  const rewindTo = (label: string, only?: string[]): FileSet => {
    const selected = (path: string) => only === undefined || only.some((entry) => path === entry || path.startsWith(`${entry}/`));
    return trackedPaths().filter(selected).reduce((next, path) => withPath(next, path, versionAt(path, label)), current);
  };
  const labels = scenarioSteps.flatMap((step) => (step.do === 'checkpoint' ? [step.label] : []));
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
        current = withPath(current, step.path, step.content);
        break;
      case 'record-write':
        lastWrite.set(step.path, current[step.path] ?? null);
        break;
      case 'edit':
        current = withPath(current, step.path, step.content);
        break;
      case 'rewind':
        if (step.merge === true) {
          current = trackedPaths().reduce((next, path) => withPath(next, path, undoOnTop(current[path] ?? null, lastWrite.get(path), versionAt(path, step.label))), current);
        } else current = rewindTo(step.label, step.paths);
        break;
      case 'rewind-undo':
        // The undo checkpoint holds every tracked path as it was just before that rewind.
        current = { ...states[step.undoOf - 1]! };
        break;
      case 'revert-turn': {
        // The turn ends at the next checkpoint (the scenario reverts no latest turn).
        const next = labels[labels.indexOf(step.label) + 1]!;
        for (const path of trackedPaths()) {
          const [before, after] = [versionAt(path, step.label), versionAt(path, next)];
          if (before !== after) current = withPath(current, path, undoOnTop(current[path] ?? null, after, before));
        }
        break;
      }
      default:
        break;
    }
    states[index] = current;
  });
  return states;
}

/**
 * Undoing the change base -> restored on top of the file now, as the
 * library documents it (git revert): a file still at base goes back, one
 * already restored or a change of nothing stays, anything else is the
 * three-way merge. The scenario's merges are clean; a conflict is a mistake in it.
 */
function undoOnTop(now: string | null, base: string | null | undefined, restored: string | null): string | null {
  if (base === undefined || now === base) return restored;
  if (now === restored || base === restored) return now;
  if (now === null || base === null || restored === null) throw new Error('the crash scenario has no modify/delete case');
  const result = mergeThreeWay({ base: Buffer.from(base, 'latin1'), ours: Buffer.from(now, 'latin1'), theirs: Buffer.from(restored, 'latin1') });
  if (result.status !== 'clean') throw new Error('the crash scenario merges cleanly');
  return result.merged.toString('latin1');
}

/** Fixed checkpoint ids, so the test knows them without asking the child. */
export const checkpointIds: Record<string, string> = {
  c1: '00000000-0000-4000-8000-0000000000c1',
  c2: '00000000-0000-4000-8000-0000000000c2',
  c3: '00000000-0000-4000-8000-0000000000c3',
  c4: '00000000-0000-4000-8000-0000000000c4',
  c5: '00000000-0000-4000-8000-0000000000c5',
  c6: '00000000-0000-4000-8000-0000000000c6',
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
  /**
   * Only kill inside this step: `killAt` counts the step's own calls, and
   * `killAfterRewindEnd` waits for its end record. A late step's calls then
   * do not move with the calls the racy window adds or saves before it.
   */
  killInStep?: number;
  /** Report the project's files after each step (the run that sets the kill points checks them against the model). */
  reportFiles?: boolean;
}

/** One line the worker prints after each step it finished. */
export interface StepReport {
  step: number;
  /** Library fs calls counted so far. */
  calls: number;
  undoCheckpointId?: string;
  /** With `reportFiles`: the project's files after the step. */
  files?: FileSet;
}
