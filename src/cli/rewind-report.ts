import type { MergeConflict } from '../rewind/file-merge.js';
import type { RewindFilesReady } from '../rewind/result.js';
import type { RewindConflictChoice } from '../rewind/rewind-choice.js';
import type { Invocation } from './command.js';
import { displayPath, formatTable, plural } from './format.js';
import type { RewindOutput } from './output-schemas.js';

/** How the human output names a rewind or a revert: the table and its notes are the same for both. */
export interface RewindWording {
  verb: 'rewind' | 'revert';
  past: 'rewound' | 'reverted';
  /** `A rewind to message X`: the subject of the preview's heading. */
  subject: string;
  /** `cannot be put back as at message X`: what the files left alone cannot be. */
  cannot: string;
  /** `the files already match message X`: why there is nothing to do. */
  nothing: string;
  /** `Files rewound to state at message X`: the first line after a real run. */
  done: string;
}

export type RewindReportFields = Pick<RewindOutput, 'sessionId' | 'checkpointId' | 'cwd' | 'rewound' | 'notRewoundBecause' | 'undoCheckpointId'>;

export function toOutput(fields: RewindReportFields, result: RewindFilesReady): RewindOutput {
  return {
    ...fields,
    files: result.files.map((file) => ({
      path: file.path,
      action: file.action,
      insertions: file.insertions,
      deletions: file.deletions,
      binary: file.binary,
      statsSkipped: file.statsSkipped,
      conflict: file.conflict,
      ...(file.merge !== undefined ? { merge: file.merge } : {}),
    })),
    insertions: result.insertions,
    deletions: result.deletions,
    skipped: result.skipped.map((entry) => ({ path: entry.path, reason: entry.reason, message: entry.message, ...(entry.merge !== undefined ? { merge: entry.merge } : {}) })),
    skippedLinks: result.skippedLinks,
    conflicts: result.conflicts,
  };
}

/** The table of changes, then the files left alone: the preview before a rewind or revert and the report after it. */
export function printPlan(invocation: Invocation, output: RewindOutput, wording: RewindWording, onConflict: RewindConflictChoice): void {
  const { out } = invocation;
  const style = out.style;
  const written = output.rewound;
  if (output.files.length === 0 && output.skipped.length > 0) {
    const count = plural(output.skipped.length, 'tracked file');
    out.line(
      output.notRewoundBecause === 'dry-run'
        ? `A ${wording.verb} would change nothing: ${count} ${wording.cannot} and would be left alone.`
        : `Nothing ${wording.past}: ${count} ${wording.cannot} and ${output.skipped.length === 1 ? 'was' : 'were'} left alone.`,
    );
  } else if (output.files.length === 0) {
    out.line(`Nothing to ${wording.verb}: ${wording.nothing}.`);
  } else {
    const subject = written ? `The ${wording.verb} changed` : `${wording.subject} would change`;
    out.line(`${subject} ${style.bold(plural(output.files.length, 'file'))} (${style.green(`+${output.insertions}`)} ${style.red(`-${output.deletions}`)}):`);
    out.line();
    const notes = output.files.map((file) => fileNote(file, onConflict));
    const hasNotes = notes.some((note) => note !== '');
    out.line(
      formatTable(
        ['ACTION', 'LINES', 'FILE', ...(hasNotes ? ['NOTE'] : [])],
        output.files.map((file, index) => [
          file.action,
          file.binary ? 'binary' : file.statsSkipped ? '?' : `+${file.insertions} -${file.deletions}`,
          displayPath(file.path, output.cwd),
          ...(hasNotes ? [notes[index]!] : []),
        ]),
        style.bold,
        (row, column, text) => (column === 0 ? actionStyle(invocation, output.files[row]!.action)(text) : column === 3 && output.files[row]!.merge?.status !== 'clean' ? style.yellow(text) : text),
      ),
    );
  }
  if (output.skipped.length > 0) {
    out.line();
    out.line(style.bold(`Left alone (${output.skipped.length}):`));
    for (const entry of output.skipped) {
      // The library's sentence names the absolute path and no lines for people to find; the regions say where to look.
      const conflicts = entry.reason === 'merge-conflict' ? (entry.merge?.conflicts ?? []) : [];
      out.line(conflicts.length > 0 ? `  ${displayPath(entry.path, output.cwd)} was left alone: ${conflictPlace(conflicts)} with later edits.` : `  ${entry.message}`);
    }
  }
}

function fileNote(file: RewindOutput['files'][number], onConflict: RewindConflictChoice): string {
  if (file.merge?.status === 'clean') return 'merged';
  if (file.merge?.status === 'conflict') {
    const markers = onConflict === 'markers' && file.merge.conflicts.length > 0;
    return `${conflictPlace(file.merge.conflicts)} (${markers ? 'with conflict markers' : 'later edits discarded'})`;
  }
  return file.conflict ? 'changed since the agent last wrote it' : '';
}

/**
 * `conflict at lines 5–7, 12`: the regions in the file as it was before
 * the rewind. An empty region (lines deleted since) is named by the line
 * it comes before. No regions: a conflict of the whole file (deleted or
 * created since, binary).
 */
function conflictPlace(conflicts: readonly MergeConflict[]): string {
  if (conflicts.length === 0) return 'conflict';
  const regions = conflicts.map(({ current }) => (current.count <= 1 ? `${current.start}` : `${current.start}–${current.start + current.count - 1}`));
  const single = conflicts.length === 1 && conflicts[0]!.current.count <= 1;
  return `conflict at ${single ? 'line' : 'lines'} ${regions.join(', ')}`;
}

function actionStyle(invocation: Invocation, action: string): (text: string) => string {
  const style = invocation.out.style;
  if (action === 'delete') return style.red;
  if (action === 'recreate') return style.green;
  return style.cyan;
}
