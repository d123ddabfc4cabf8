/**
 * A unified patch read back into lines for display. The patch goes from the
 * file now (`-`) to the file at the checkpoint (`+`): what a rewind removes,
 * then what it puts back.
 */

export type LineKind = 'context' | 'removed' | 'added';

export interface PatchLine {
  kind: LineKind;
  text: string;
  /** Line number in the file now (context and removed lines). */
  oldNumber?: number;
  /** Line number in the file at the checkpoint (context and added lines). */
  newNumber?: number;
}

export interface DisplayHunk {
  header: string;
  lines: PatchLine[];
}

const hunkHeader = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function parsePatch(patch: string): DisplayHunk[] {
  const hunks: DisplayHunk[] = [];
  let current: DisplayHunk | undefined;
  let oldNumber = 0;
  let newNumber = 0;
  for (const line of patch.split('\n')) {
    const header = hunkHeader.exec(line);
    if (header !== null) {
      current = { header: line, lines: [] };
      hunks.push(current);
      oldNumber = Number(header[1]);
      newNumber = Number(header[2]);
      // A side with no lines starts at the line before it (git's numbering).
      if (/^@@ -\d+,0 /.test(line)) oldNumber += 1;
      if (/^@@ -\S+ \+\d+,0 @@/.test(line)) newNumber += 1;
      continue;
    }
    if (current === undefined || line === '' || line.startsWith('\\')) continue;
    const text = line.slice(1);
    if (line[0] === ' ') current.lines.push({ kind: 'context', text, oldNumber: oldNumber++, newNumber: newNumber++ });
    else if (line[0] === '-') current.lines.push({ kind: 'removed', text, oldNumber: oldNumber++ });
    else if (line[0] === '+') current.lines.push({ kind: 'added', text, newNumber: newNumber++ });
  }
  return hunks;
}

/** A run of removed lines and the added lines right after them: the lines a word diff pairs up. */
export interface ChangeRun {
  removed: PatchLine[];
  added: PatchLine[];
}

/** The hunk as context lines and change runs, in order. */
export function changeRuns(lines: readonly PatchLine[]): Array<PatchLine | ChangeRun> {
  const parts: Array<PatchLine | ChangeRun> = [];
  let run: ChangeRun | undefined;
  for (const line of lines) {
    if (line.kind === 'context') {
      run = undefined;
      parts.push(line);
      continue;
    }
    if (run === undefined || (line.kind === 'removed' && run.added.length > 0)) {
      run = { removed: [], added: [] };
      parts.push(run);
    }
    (line.kind === 'removed' ? run.removed : run.added).push(line);
  }
  return parts;
}
