import { endsWithCrlf, endsWithNewline, lineBytes, type LineFile } from './line-table.js';
import type { MergeRegion } from './merge-regions.js';

/**
 * The merged file: ours, with each region replaced by theirs' lines or by a
 * conflict block showing all three versions between marker lines, as
 * `git merge-file --diff3` writes it.
 */

export interface MergeLabels {
  ours: string;
  base: string;
  theirs: string;
}

export interface MergeFiles {
  base: LineFile;
  ours: LineFile;
  theirs: LineFile;
}

export function writeMerge(files: MergeFiles, regions: readonly MergeRegion[], labels: MergeLabels): Buffer {
  const { ours, theirs } = files;
  const parts: Buffer[] = [];
  let oursLine = 0;
  for (const region of regions) {
    parts.push(lineBytes(ours, oursLine, region.oursStart));
    if (region.kind === 'ours') parts.push(lineBytes(ours, region.oursStart, region.oursEnd));
    else if (region.kind === 'theirs') parts.push(lineBytes(theirs, region.theirsStart, region.theirsEnd));
    else parts.push(...conflictBlock(files, region, labels));
    oursLine = region.oursEnd;
  }
  parts.push(lineBytes(ours, oursLine, ours.ids.length));
  return Buffer.concat(parts);
}

function conflictBlock(files: MergeFiles, region: MergeRegion, labels: MergeLabels): Buffer[] {
  const eol = markerLineEnd(files, region);
  const marker = (text: string) => Buffer.from(text + eol, 'utf8');
  // A section whose last line lacks a newline gets one, so that the next marker starts a line.
  const section = (file: LineFile, start: number, end: number) =>
    end > start && !endsWithNewline(file, end - 1) ? [lineBytes(file, start, end), Buffer.from(eol)] : [lineBytes(file, start, end)];
  return [
    marker(`<<<<<<< ${labels.ours}`),
    ...section(files.ours, region.oursStart, region.oursEnd),
    marker(`||||||| ${labels.base}`),
    ...section(files.base, region.baseStart, region.baseEnd),
    marker('======='),
    ...section(files.theirs, region.theirsStart, region.theirsEnd),
    marker(`>>>>>>> ${labels.theirs}`),
  ];
}

type LineEnd = '\n' | '\r\n' | undefined;

/**
 * Markers end in CRLF only when the line before the conflict in ours (or its
 * first line) and the same line in theirs are not plain LF, and the base's
 * first line ends in CRLF: git's guess at whether the file is a CRLF file.
 */
function markerLineEnd(files: MergeFiles, region: MergeRegion): '\n' | '\r\n' {
  if (lineEndNear(files.ours, region.oursStart) === '\n') return '\n';
  if (lineEndNear(files.theirs, region.theirsStart) === '\n') return '\n';
  return lineEnd(files.base, 0) === '\r\n' ? '\r\n' : '\n';
}

/** The ending of the line before `start`, or of line 0 when the conflict starts the file. */
function lineEndNear(file: LineFile, start: number): LineEnd {
  return lineEnd(file, Math.max(start - 1, 0));
}

/** A line's ending; a last line without a newline answers for the line before it, if any. */
function lineEnd(file: LineFile, line: number): LineEnd {
  const count = file.ids.length;
  if (count === 0) return undefined;
  if (line === count - 1 && !endsWithNewline(file, line)) {
    if (line === 0) return undefined;
    return endsWithCrlf(file, line - 1) ? '\r\n' : '\n';
  }
  return endsWithCrlf(file, line) ? '\r\n' : '\n';
}
