import path from 'node:path';
import { isInside } from '../paths.js';
import type { FileDiff } from '../diff/diff-files.js';
import type { RewindFilesReady } from '../rewind/result.js';
import type { RewindOutput } from './output-schemas.js';

/**
 * Files one report lists, changed and left alone each: Claude Code turns a tool result of more than 25,000
 * tokens into an error (`MAX_MCP_OUTPUT_TOKENS`), and a rewind of thousands of files would make one. The totals
 * still count every file.
 */
export const filesPerReport = 200;
/** Lines of one file's diff a preview shows; the diff resource has the rest. */
export const diffLinesPerFile = 80;
/** Lines of diff one preview shows over all its files, so a large rewind stays readable to a model. */
export const diffLinesPerPreview = 400;

export interface RewindReportFields {
  sessionId: string;
  checkpointId: string;
  cwd: string;
}

/** The words of a report: what was done (or previewed), and what to do next, if anything. */
export interface RewindWording {
  heading: string;
  next?: string;
}


/** A rewind's result as the tools report it, each changed file with its diff when `diffs` has one, cut to the budget above. */
export function toRewindOutput(fields: RewindReportFields, result: RewindFilesReady, wording: RewindWording, diffs: readonly FileDiff[] = []): RewindOutput {
  const patches = new Map(diffs.flatMap((diff) => (diff.action !== 'skip' && diff.patch !== undefined ? [[diff.path, diff.patch] as const] : [])));
  let budget = diffLinesPerPreview;
  const files = result.files.slice(0, filesPerReport).map((file) => {
    const merge = file.merge !== undefined ? { merge: { status: file.merge.status, conflicts: file.merge.conflicts.length } } : {};
    const patch = patches.get(file.path);
    const base = { path: file.path, action: file.action, insertions: file.insertions, deletions: file.deletions, binary: file.binary, conflict: file.conflict, ...merge };
    if (patch === undefined) return base;
    const lines = patch.replace(/\n$/, '').split('\n');
    const shown = Math.max(0, Math.min(lines.length, diffLinesPerFile, budget));
    budget -= shown;
    if (shown === lines.length) return { ...base, diff: patch };
    return { ...base, ...(shown > 0 ? { diff: `${lines.slice(0, shown).join('\n')}\n` } : {}), diffTruncated: true };
  });
  return {
    summary: summarize(result, wording),
    ...fields,
    dryRun: result.dryRun,
    rewound: !result.dryRun && files.length > 0,
    files,
    filesLeftOut: result.files.length - files.length,
    insertions: result.insertions,
    deletions: result.deletions,
    conflicts: result.conflicts,
    skipped: result.skipped.slice(0, filesPerReport).map((entry) => ({ path: entry.path, reason: entry.reason, message: entry.message })),
    skippedLeftOut: Math.max(0, result.skipped.length - filesPerReport),
    skippedLinks: result.skippedLinks,
    directoriesRemoved: result.directoriesRemoved,
    ...(result.undoCheckpointId !== undefined ? { undoCheckpointId: result.undoCheckpointId } : {}),
  };
}

function summarize(result: RewindFilesReady, wording: RewindWording): string {
  const count = (number: number, noun: string) => `${number} ${noun}${number === 1 ? '' : 's'}`;
  const parts = [wording.heading];
  if (result.files.length === 0) parts.push(result.skipped.length === 0 ? 'No file differs: nothing to change.' : 'No file changes.');
  else parts.push(`${count(result.files.length, 'file')}, +${result.insertions} -${result.deletions} lines.`);
  if (result.conflicts.length > 0) parts.push(`${count(result.conflicts.length, 'file')} changed since the agent last wrote them (conflicts).`);
  if (result.skipped.length > 0) parts.push(`${count(result.skipped.length, 'tracked file')} left alone (see skipped).`);
  if (result.undoCheckpointId !== undefined) parts.push(`To undo: undo_rewind with undoCheckpointId ${result.undoCheckpointId}.`);
  if (wording.next !== undefined && result.files.length > 0) parts.push(wording.next);
  return parts.join(' ');
}

/** The report as the model reads it as text: the summary, each file, what is left alone, then the diffs. */
export function describeRewind(output: RewindOutput, diffResource?: string): string {
  const shown = (file: string) => (isInside(file, output.cwd) ? path.relative(output.cwd, file) : file);
  const lines = [output.summary];
  for (const file of output.files) {
    const notes = [
      file.binary ? 'binary' : undefined,
      file.conflict ? 'CONFLICT: changed since the agent last wrote it; a rewind discards that edit' : undefined,
      file.merge !== undefined ? `merged, ${file.merge.status === 'clean' ? 'cleanly' : `${file.merge.conflicts} conflicting region(s)`}` : undefined,
    ].filter((note) => note !== undefined);
    lines.push(`- ${file.action} ${shown(file.path)} (+${file.insertions} -${file.deletions})${notes.length > 0 ? ` [${notes.join('; ')}]` : ''}`);
  }
  if (output.filesLeftOut > 0) lines.push(`- and ${output.filesLeftOut} more`);
  if (output.skipped.length > 0) {
    lines.push(`Left alone (${output.skipped.length + output.skippedLeftOut}):`);
    for (const entry of output.skipped) lines.push(`- ${shown(entry.path)}: ${entry.reason}: ${entry.message}`);
    if (output.skippedLeftOut > 0) lines.push(`- and ${output.skippedLeftOut} more`);
  }
  for (const file of output.files.filter((candidate) => candidate.diff !== undefined)) {
    lines.push('', file.diff!.replace(/\n$/, '') + (file.diffTruncated === true ? '\n[diff cut short]' : ''));
  }
  if (diffResource !== undefined && (output.filesLeftOut > 0 || output.files.some((file) => file.diffTruncated === true))) lines.push('', `Some diffs were cut short or left out; the whole patch is the resource ${diffResource}`);
  return lines.join('\n');
}
