import { structuredPatch, type StructuredPatchHunk } from 'diff';
import { countLines, isBinary, lineStats } from '../text/line-stats.js';
import { changedRegion, countNewlines, linesBack, linesForward } from './changed-region.js';

export interface ChangeSummary {
  /** Lines the tool added, as `git diff --numstat` counts them (0 for binary content). */
  linesAdded: number;
  /** Lines the tool removed. */
  linesRemoved: number;
  /**
   * The change as unified-diff hunks (3 lines of context, `\r` stripped), for
   * an agent to read. Empty for a created file (`linesAdded` says how long it
   * is); `null` when the old or new content is not UTF-8 text, or the change
   * is too large to be worth reading (then the counts are those of
   * replacing the whole changed region, an upper bound).
   */
  structuredPatch: StructuredPatchHunk[] | null;
}

const contextLines = 3;
/**
 * Bounds on the work of the line counts and the patch, so a huge rewrite
 * cannot stall a tool call. Past them, the counts are those of replacing the
 * whole changed region, and there is no patch.
 */
const maxSteps = 5_000_000;
const maxPatchLines = 20_000;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** One side of a change: the bytes, and their UTF-8 text when the caller has decoded it already (byte order mark included). */
export interface ChangeSide {
  bytes: Uint8Array;
  text?: string;
}

/** What a write changed: line counts, and a patch where one makes sense. `before` is undefined for a created file. */
export function summarizeChange(filePath: string, before: ChangeSide | undefined, after: ChangeSide): ChangeSummary {
  if (before === undefined) return { linesAdded: countLines(after.bytes), linesRemoved: 0, structuredPatch: [] };
  const binary = isBinary(before.bytes) || isBinary(after.bytes);
  const beforeText = binary ? undefined : (before.text ?? decode(before.bytes));
  const afterText = beforeText === undefined ? undefined : (after.text ?? decode(after.bytes));
  if (beforeText === undefined || afterText === undefined) {
    const stats = lineStats(before.bytes, after.bytes, { maxSteps });
    return stats.skipped
      ? { linesAdded: countLines(after.bytes), linesRemoved: countLines(before.bytes), structuredPatch: null }
      : { linesAdded: stats.insertions, linesRemoved: stats.deletions, structuredPatch: null };
  }
  const region = changedRegion(beforeText, afterText);
  // Lines outside the region are common to both sides, so counting within it gives the whole file's numbers.
  const removed = Buffer.from(beforeText.slice(region.start, region.beforeEnd));
  const added = Buffer.from(afterText.slice(region.start, region.afterEnd));
  const stats = lineStats(removed, added, { maxSteps });
  if (stats.skipped) return { linesAdded: countLines(added), linesRemoved: countLines(removed), structuredPatch: null };
  return { linesAdded: stats.insertions, linesRemoved: stats.deletions, structuredPatch: patchOf(filePath, beforeText, afterText, region) };
}

/** "+3 -1 lines", for the one-line messages agents read. */
export function describeLineCounts(summary: ChangeSummary): string {
  return `+${summary.linesAdded} -${summary.linesRemoved} lines`;
}

/** "1 line", "3 lines". */
export function describeLines(count: number): string {
  return `${count} ${count === 1 ? 'line' : 'lines'}`;
}

function patchOf(filePath: string, before: string, after: string, region: ReturnType<typeof changedRegion>): StructuredPatchHunk[] | null {
  if (region.beforeEnd === region.start && region.afterEnd === region.start) return [];
  const from = linesBack(before, region.start, contextLines);
  const beforeSnippet = before.slice(from, linesForward(before, region.beforeEnd, contextLines));
  const afterSnippet = after.slice(from, linesForward(after, region.afterEnd, contextLines));
  const regionLines = countNewlines(beforeSnippet) + countNewlines(afterSnippet) + 2;
  if (regionLines > maxPatchLines) return null;
  const maxEditLength = Math.max(1, Math.floor(maxSteps / regionLines));
  const patch = structuredPatch(filePath, filePath, beforeSnippet, afterSnippet, undefined, undefined, { context: contextLines, stripTrailingCr: true, maxEditLength });
  if (patch === undefined) return null;
  const offset = countNewlines(before, 0, from);
  return patch.hunks.map((hunk) => ({ ...hunk, oldStart: hunk.oldStart + offset, newStart: hunk.newStart + offset }));
}

function decode(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
